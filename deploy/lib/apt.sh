# shellcheck shell=bash
# deploy/lib/apt.sh -- sourced by the build and test scripts: the host packages a script needs,
# installed from Debian's archive when missing.
#
# install_missing PACKAGE...: installs those of PACKAGE... that are not installed (apt-get, with
# sudo when not root). One apt-get at a time on the machine: the test suite's preparations run
# side by side, and apt-get update does not wait for another's lock.
install_missing() {
    local missing=() p sudo=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "missing ${missing[*]}, and this is not a Debian system: install them by hand" >&2
        return 1
    fi
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "run as root or install sudo to install ${missing[*]}" >&2; return 1; }
        sudo=(sudo)
    fi
    echo "installing ${missing[*]}" >&2
    # shellcheck disable=SC2016 # the script is sh's, with the packages as its arguments
    "${sudo[@]}" flock /run/lock/unwind-apt.lock sh -ec '
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
    ' _ "${missing[@]}"
}
