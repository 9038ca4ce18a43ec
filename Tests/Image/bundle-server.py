#!/usr/bin/env python3
"""A clinic's update server for the image's boot test: serves the bundles in a directory over
HTTP with byte ranges, as RAUC's streaming install reads a bundle (HEAD for its size, then GET
with "Range: bytes=A-B" for the parts it needs), and records what it sent.

    bundle-server.py --dir DIR --port-file FILE --log FILE

Listens on 127.0.0.1 on a free port (written to --port-file once it listens); the emulated
machine reaches it through qemu's user network as 10.0.2.2. --log gets one line per request:
    GET <path> <first>-<last> <bytes sent>
    HEAD <path> - 0
    REFUSED <path> <status>
so that the test adds up what a device downloaded. Ends on SIGTERM.
"""
import argparse, http.server, os, re, signal, sys, threading

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    args = p.parse_args()
    root = os.path.realpath(args.dir)
    log = open(args.log, "a", buffering=1)
    lock = threading.Lock()

    def record(line):
        with lock:
            log.write(line + "\n")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def target(self):
            # Only a plain file directly in DIR: no "..", no links out of it.
            name = self.path.split("?", 1)[0].lstrip("/")
            if not re.fullmatch(r"[A-Za-z0-9._-]+", name) or name.startswith("."):
                return None
            path = os.path.join(root, name)
            if os.path.islink(path) or not os.path.isfile(path):
                return None
            return path

        def refuse(self, status, size=None):
            record("REFUSED %s %d" % (self.path[:200], status))
            self.send_response(status)
            self.send_header("Content-Length", "0")
            if size is not None:
                self.send_header("Content-Range", "bytes */%d" % size)
            self.end_headers()

        def do_HEAD(self):
            path = self.target()
            if path is None:
                return self.refuse(404)
            self.send_response(200)
            self.send_header("Content-Length", str(os.path.getsize(path)))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            record("HEAD %s - 0" % self.path)

        def do_GET(self):
            path = self.target()
            if path is None:
                return self.refuse(404)
            size = os.path.getsize(path)
            first, last, status = 0, size - 1, 200
            # One range, as RAUC asks; anything else it cannot parse is ignored (the whole file),
            # as RFC 9110 lets a server do. A range that starts past the end is refused (416).
            wanted = self.headers.get("Range")
            m = re.fullmatch(r"bytes=(\d*)-(\d*)", wanted.strip()) if wanted is not None else None
            if m is not None and (m.group(1) != "" or m.group(2) != ""):
                if m.group(1) == "":        # the last N bytes
                    first = max(0, size - int(m.group(2)))
                else:
                    first = int(m.group(1))
                    if m.group(2) != "":
                        last = min(int(m.group(2)), size - 1)
                if first >= size:
                    return self.refuse(416, size)
                if first <= last:
                    status = 206
                else:
                    first, last = 0, size - 1
            self.send_response(status)
            self.send_header("Content-Length", str(last - first + 1))
            self.send_header("Accept-Ranges", "bytes")
            if status == 206:
                self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, size))
            self.end_headers()
            sent = 0
            with open(path, "rb") as f:
                f.seek(first)
                left = last - first + 1
                try:
                    while left > 0:
                        chunk = f.read(min(left, 1 << 16))
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                        sent += len(chunk)
                        left -= len(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True    # the client went away: what it got is logged
                finally:
                    record("GET %s %d-%d %d" % (self.path, first, last, sent))

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with open(args.port_file + ".new", "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.replace(args.port_file + ".new", args.port_file)
    server.serve_forever()

if __name__ == "__main__":
    main()
