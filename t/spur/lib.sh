# shellcheck shell=bash
# t/spur/lib.sh: shared by the spur emulation's commands in t/spur/bin.

# The real SLURM client NAME: the first on PATH that is not this emulation, so the shims
# work over whichever SLURM release the test cluster runs (its clients must match its
# controller). Prints the path, or fails with a message.
spur_real() {
    local name=$1 dir here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")/bin" && pwd -P)
    local IFS=:
    for dir in $PATH; do
        [[ -n $dir && -x $dir/$name && ! $dir -ef $here ]] || continue
        printf '%s\n' "$dir/$name"
        return 0
    done
    echo "spur emulation: no real $name on PATH (besides $here)" >&2
    return 1
}
