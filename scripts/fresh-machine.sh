#!/usr/bin/env bash
# Times the README's two commands on a fresh machine: a Debian bookworm chroot
# made with debootstrap (minbase), given this machine's Rust toolchain
# (rustup's stable, copied) and what that toolchain needs to link (gcc,
# libc6-dev), git, the CA certificates this machine trusts and an
# /etc/hosts naming localhost, and nothing else; then a fresh clone of this repository's HEAD, `../shared` beside it
# when there is one, and `bash scripts/passlab.sh COMMAND` run in it.
#
#   bash scripts/fresh-machine.sh demo|test [DIR]   # DIR: /srv/passlab-fresh
#
# Run as root on a Debian machine with network access to Debian's mirror,
# crates.io and PyPI. The chroot is made anew each time (DIR is removed
# first); its log is DIR.log, and the last line says how long the command
# took and how it ended. Not run by the tests.
set -euo pipefail
command=${1:?usage: bash scripts/fresh-machine.sh demo|test [DIR]}
root=${2:-/srv/passlab-fresh}
repo=$(cd "$(dirname "$0")/.." && pwd)

unmount() {
    # (lazily when busy: a process left running in the chroot, a Ray
    # server started there by hand, kept /dev/shm busy and /dev mounted,
    # and the next run refused to start)
    for m in dev sys proc; do
        umount -R "$root/$m" 2>/dev/null || umount -R -l "$root/$m" 2>/dev/null || true
    done
}
trap unmount EXIT

command -v debootstrap >/dev/null ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
unmount
if grep -q " $root/" /proc/mounts; then
    echo "fresh-machine: something is still mounted under $root; not removing it" >&2
    exit 1
fi
rm -rf --one-file-system "$root"
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
mkdir -p "$root/root/.rustup/toolchains" "$root/root/.cargo/bin"
toolchain=$(rustup show active-toolchain | cut -d' ' -f1)
cp -a "$(rustup toolchain list -v | grep "^$toolchain" | awk '{print $NF}')" \
    "$root/root/.rustup/toolchains/$toolchain"
printf 'default_toolchain = "%s"\nprofile = "default"\nversion = "12"\n' "$toolchain" \
    >"$root/root/.rustup/settings.toml"
cp -a "$HOME/.cargo/bin/." "$root/root/.cargo/bin/"
cp /etc/resolv.conf "$root/etc/"
# As every Debian install has (debootstrap writes none); the machine's own
# name is left out, as on machines whose name does not resolve.
echo "127.0.0.1 localhost" >"$root/etc/hosts"
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
    rm -f "$root/etc/apt/sources.list"
fi
mkdir -p "$root/usr/local/share/ca-certificates"
cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
chroot "$root" /bin/bash -c 'export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc libc6-dev git ca-certificates >/dev/null
    update-ca-certificates >/dev/null' 2>/dev/null
mkdir -p "$root/work"
git clone -q "$repo" "$root/work/passlab"
[ -d "$repo/../shared" ] && cp -a "$repo/../shared" "$root/work/shared"
cat >"$root/work/run.sh" <<EOF
#!/bin/bash
cd /work/passlab
start=\$(date +%s)
bash scripts/passlab.sh $command
rc=\$?
echo "fresh-machine: '$command' ended with \$rc after \$(( \$(date +%s) - start )) s"
EOF
chmod +x "$root/work/run.sh"
echo "fresh-machine: running '$command' in $root (log: $root.log)" >&2
chroot "$root" /usr/bin/env -i HOME=/root TERM=xterm LANG=C.UTF-8 \
    PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /work/run.sh 2>&1 | awk '{ printf "%7.1f %s\n", systime() - start, $0; fflush() }' start="$(date +%s)" >"$root.log"
tail -1 "$root.log"
