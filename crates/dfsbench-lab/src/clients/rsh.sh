#!/bin/sh
# mpirun's rsh agent for the client nodes of lab {lab}, written by `dfsbench lab up`:
# `rsh [OPTIONS] HOST COMMAND...` runs COMMAND, as ssh would, on client node HOST, in its
# network, UTS and mount namespaces (those of its holder process, whose pid and start time
# are in {dir}/HOST.pid), with its root and working directory (under a chroot, entering the
# mount namespace alone would put COMMAND in another tree).
while [ "${1#-}" != "$1" ]; do shift; done
host=$1
shift
if ! read -r pid start 2>/dev/null < "{dir}/$host.pid"; then
    echo "rsh: lab {lab} has no client node $host (dfsbench lab status {lab})" >&2
    exit 255
fi
if [ "$(cut -d' ' -f22 "/proc/$pid/stat" 2>/dev/null)" != "$start" ]; then
    echo "rsh: client node $host of lab {lab} is down (dfsbench lab fault {lab} restart $host)" >&2
    exit 255
fi
exec nsenter -t "$pid" --net --uts --mount --root --wd sh -c "$*"
