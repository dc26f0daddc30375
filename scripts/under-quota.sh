#!/usr/bin/env bash
# Runs a command inside a cgroup with a CPU quota, as a CI runner pod with `cpu: 1` runs
# its job: `bash scripts/under-quota.sh 1.5 cargo nextest run`. Needs root and a cgroup
# file system it may write (v2's cpu.max, or v1's cpu and cpuacct hierarchies); refuses
# with the reason otherwise. The cgroup is removed when the command ends.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 CPUS COMMAND [ARGS...]   (CPUS: the quota, e.g. 1 or 1.5)" >&2
    exit 2
fi
cpus=$1
shift
period=100000
quota=$(python3 -c "import sys; q = float(sys.argv[1]); assert 0.01 <= q <= 256, q; print(int(q * $period))" "$cpus") || {
    echo "error: CPUS must be a number from 0.01 to 256, not '$cpus'" >&2
    exit 2
}
name="perfshape-quota-$$"
dirs=()
if [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    # cgroup v2: one hierarchy, the cpu controller enabled for children.
    echo "+cpu" > /sys/fs/cgroup/cgroup.subtree_control
    dir=/sys/fs/cgroup/$name
    mkdir "$dir"
    dirs+=("$dir")
    echo "$quota $period" > "$dir/cpu.max"
    echo $$ > "$dir/cgroup.procs"
elif [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu ]; then
    # cgroup v1: the quota on the cpu hierarchy, the usage on cpuacct (the same path in
    # both, as a container runtime makes it).
    for hierarchy in cpu cpuacct; do
        dir=/sys/fs/cgroup/$hierarchy/$name
        mkdir -p "$dir"
        dirs+=("$dir")
        echo $$ > "$dir/cgroup.procs"
    done
    echo $period > "/sys/fs/cgroup/cpu/$name/cpu.cfs_period_us"
    echo "$quota" > "/sys/fs/cgroup/cpu/$name/cpu.cfs_quota_us"
else
    echo "error: no writable cgroup CPU controller here (need root, and /sys/fs/cgroup with cpu)" >&2
    exit 1
fi
cleanup() {
    # Back to the parent cgroup, then the (now empty) cgroup goes.
    for dir in "${dirs[@]}"; do
        echo $$ > "$(dirname "$dir")/cgroup.procs" 2>/dev/null || true
        rmdir "$dir" 2>/dev/null || true
    done
}
trap cleanup EXIT
echo "under a quota of $cpus CPUs ($quota µs in each $period µs), in ${dirs[*]}" >&2
status=0
"$@" || status=$?
exit $status
