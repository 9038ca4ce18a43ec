# unwind_chroot -- a test-only Ansible connection: runs every command in the chroot named by
# the host's address (ansible_host), so deploy/test.sh can run the playbook against throwaway
# Debian roots on one machine. The local connection with "chroot DIR" in front of commands
# and DIR in front of transferred paths. Not for devices: they are reached over SSH.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = """
    name: unwind_chroot
    short_description: run tasks inside a chroot (deploy/test.sh only)
    description:
        - Like the local connection, with every command run through chroot(8) into the
          directory given as the host's address, and files copied below that directory.
    author: Unwind maintainers
"""

import os
import shlex

from ansible.plugins.connection.local import Connection as LocalConnection


class Connection(LocalConnection):
    transport = "unwind_chroot"
    has_pipelining = True

    def _root(self):
        root = self._play_context.remote_addr
        if not root or not os.path.isdir(os.path.join(root, "usr")):
            raise ValueError("unwind_chroot: %r is not a chroot directory" % root)
        return root

    def exec_command(self, cmd, in_data=None, sudoable=True):
        if not isinstance(cmd, str):
            cmd = cmd.decode() if isinstance(cmd, bytes) else " ".join(cmd)
        wrapped = "chroot %s /bin/sh -c %s" % (shlex.quote(self._root()), shlex.quote(cmd))
        return super(Connection, self).exec_command(wrapped, in_data=in_data, sudoable=sudoable)

    def put_file(self, in_path, out_path):
        return super(Connection, self).put_file(in_path, self._root() + out_path)

    def fetch_file(self, in_path, out_path):
        return super(Connection, self).put_file(self._root() + in_path, out_path)
