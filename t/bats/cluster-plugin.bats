#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad.so on the real cluster: every job submitted as the ordinary test user.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

bats_require_minimum_version 1.5.0

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	use_plugin run
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
}

setup() {
	load ../lib.sh
	cluster_test
}

# The job whose output OUT printed job_dir=DIR: ranks 0..3 of step 0 exited 0 by their
# markers there, and no file in DIR is root's.
assert_four_step_markers() { # out
	local dir r
	look_anew "$1"
	dir=$(sed -n 's/^job_dir=//p' "$1")
	look_anew "$dir"
	for r in 0 1 2 3; do [[ $(head -1 "$dir/step0_rank$r") == 0 ]]; done
	[[ -z $(find "$dir" -user root) ]]
}

# Puts FILE at mad-writer's path WRITER as root's own executable, by a rename: a slurmstepd
# starting it meanwhile gets the old file or the new one, never a part.
place_writer() { # file writer
	install -m 0755 -o root -g root "$1" "${2%/*}/.mad-writer.new"
	mv -f "${2%/*}/.mad-writer.new" "$2"
}

teardown() {
	# a test that replaced mad-writer puts it back, passed or not
	if [[ -n ${saved_writer:-} && -e $saved_writer ]]; then
		place_writer "$saved_writer" "$writer"
	fi
}


@test "nodes fan-out: 4 nodes, the env contract on every node, TCP exchange through MASTER_ADDR" {
	submit --nodes=4 --mad-model=llama --wrap 'srun --nodes=4 ./tcp-exchange'
	assert_success
	run grep -c '^contract ' "$out"
	assert_output 4
	jobid=$(awk '/^contract/ { for (i = 1; i <= NF; i++) if ($i ~ /^collect=/) print substr($i, 9) }' "$out" | sort -u)
	[[ $jobid =~ ^[0-9]+$ ]]
	first_addr=${MAD_CLUSTER_NODE_ADDRS%% *} # this cluster's n1, whatever its subnet
	for r in 0 1 2 3; do
		grep -E "^contract host=n$((r + 1)) rank=$r mad_rank=$r RANK=$r nnodes=4 world=4 total=4 addr=${first_addr//./\\.} port=$(auto_port "$jobid" 0) collect=$jobid fanout=nodes scheduler=slurm from=spank$" "$out" ||
			[[ $MAD_CLUSTER_MODE != netns ]]
	done
	grep -qx 'exchange ok: ranks 1..3' "$out"
	# the batch script's marker: rank 0's exit status, written as the user
	[[ $(head -1 "$run_dir/$jobid/done_rank0") == 0 ]]
	[[ $(stat -c %U "$run_dir/$jobid/done_rank0") == "$MAD_CLUSTER_USER" ]]
	[[ $(cat "$run_dir/$jobid/expected") == 1 ]]
}

@test "array fan-out: one task per node, rank 0's own address, TCP exchange, %A_%a logs" {
	rm -f "$MAD_CLUSTER_SHARED"/arr-*.out
	run "$AS_USER" timeout 120 sbatch --wait --parsable --array=0-3 --exclusive --nodes=1 \
		--mad-model=m --mad-fanout=array --output='arr-%A_%a.out' --wrap './tcp-exchange'
	assert_success
	jobid=${output%%;*}
	cat "$MAD_CLUSTER_SHARED"/arr-"$jobid"_*.out
	for r in 0 1 2 3; do
		f=$MAD_CLUSTER_SHARED/arr-${jobid}_$r.out
		[[ -s $f ]] || { echo "missing $f (array logs use %A_%a)"; false; }
		grep -E "^contract host=n[1-4] rank=$r mad_rank=$r RANK=$r nnodes=4 .* collect=$jobid fanout=array " "$f"
		[[ $(head -1 "$run_dir/$jobid/done_rank$r") == 0 ]]
	done
	grep -q 'exchange ok: ranks 1..3' "$MAD_CLUSTER_SHARED/arr-${jobid}_0.out"
	[[ $(cat "$MAD_CLUSTER_SHARED"/arr-"$jobid"_*.out | grep '^contract' | awk '{print $2}' | sort -u | wc -l) -eq 4 ]]
	# MASTER_ADDR is the address rank 0 published for itself
	grep -q "^addr=$(awk '/^contract/ {sub("addr=", "", $9); print $9}' "$MAD_CLUSTER_SHARED/arr-${jobid}_0.out")\$" "$run_dir/$jobid/rendezvous"
	[[ $(cat "$run_dir/$jobid/expected") == 4 ]]
}

@test "rank 0 late past --mad-timeout: every peer fails in time, loudly, no empty MASTER_ADDR" {
	run "$AS_USER" sbatch --parsable --hold --array=0-3 --exclusive --nodes=1 --mad-model=m \
		--mad-fanout=array --mad-timeout=10 --output='late-%A_%a.out' \
		--wrap 'echo "MASTER_ADDR=[$MASTER_ADDR]"'
	assert_success
	jobid=${output%%;*}
	start=$(date +%s)
	"$AS_USER" scontrol release "${jobid}_[1-3]"
	for _ in $(seq 60); do
		look_anew "$run_dir/$jobid"
		n=$(find "$run_dir/$jobid" -maxdepth 1 -name 'done_rank*' 2>/dev/null | wc -l)
		((n == 3)) && break
		sleep 0.5
	done
	elapsed=$(($(date +%s) - start))
	"$AS_USER" scancel "$jobid"
	echo "peers failed after ${elapsed}s"
	((n == 3 && elapsed <= 10 + 15))
	for r in 1 2 3; do
		f=$MAD_CLUSTER_SHARED/late-${jobid}_$r.out
		cat "$f"
		grep -q "mad: rank $r waited 1[0-9] s (--mad-timeout=10) for rank 0 to publish its address in '$run_dir/$jobid/rendezvous'" "$f"
		run ! grep -q 'MASTER_ADDR=' "$f" # the task never ran
		[[ $(head -1 "$run_dir/$jobid/done_rank$r") == 1 ]]
		grep -q "^error=rank $r waited" "$run_dir/$jobid/done_rank$r"
	done
}

@test "precedence: command line > SLURM_SPANK env > MAD_* env > plugstack > default" {
	# ports below the kernel's ephemeral range (32768..60999), where a connection of
	# the node's own (slurmd's, srun's) may hold one, and above the auto range
	# (20000..28999): a full run failed here on 33000, "already in use on n1"
	echo "optional $so run-dir=$run_dir master-port=29100" >"$MAD_CLUSTER_PLUGSTACK"
	job='echo port=$MASTER_PORT'
	submit --mad-model=m --wrap "$job"
	grep -qx 'port=29100' "$out"
	MAD_MASTER_PORT=29200 submit --mad-model=m --wrap "$job"
	grep -qx 'port=29200' "$out"
	MAD_MASTER_PORT=29200 SLURM_SPANK__SLURM_SPANK_OPTION_mad_mad_master_port=29300 \
		submit --mad-model=m --wrap "$job"
	grep -qx 'port=29300' "$out"
	MAD_MASTER_PORT=29200 SLURM_SPANK__SLURM_SPANK_OPTION_mad_mad_master_port=29300 \
		submit --mad-model=m --mad-master-port=29400 --wrap "$job"
	grep -qx 'port=29400' "$out"
	# the model itself from the env only (what spur users do)
	MAD_MODEL=from-env submit --wrap 'echo model=$MAD_MODEL'
	grep -qx 'model=from-env' "$out"
	echo "optional $so run-dir=$run_dir" >"$MAD_CLUSTER_PLUGSTACK"
}

@test "the user's MASTER_PORT reaches every task; a job submitted from inside a mad job gets its own rank, size, ids and port" {
	out=$MAD_CLUSTER_SHARED/plugin-$BATS_TEST_NUMBER.out
	rm -f "$out"
	run "$AS_USER" env MASTER_PORT=23456 timeout 120 sbatch --wait --output="$out" --nodes=4 \
		--mad-model=outer --wrap '
		echo "outer $SLURM_JOB_ID $NODE_RANK $NNODES $MASTER_PORT"
		srun -N4 bash -c "echo step \$RANK \$MASTER_PORT"
		sbatch --wait --nodes=2 --output=inner-$SLURM_JOB_ID.out --wrap "srun -N2 bash -c \"echo inner \\\$SLURM_JOB_ID \\\$NODE_RANK \\\$NNODES \\\$MAD_COLLECT_JOB_ID \\\$MAD_MODEL \\\$RANK \\\$WORLD_SIZE \\\$MASTER_PORT\""'
	look_anew "$out"
	cat "$out"
	assert_success
	read -r _ outer _ _ port < <(grep '^outer' "$out")
	[[ $port == 23456 ]]
	[[ $(grep -c '^step [0-3] 23456$' "$out") == 4 ]]
	inner_out=$MAD_CLUSTER_SHARED/inner-$outer.out
	look_anew "$inner_out"
	cat "$inner_out"
	inner=$(awk '{print $2}' "$inner_out" | sort -u)
	[[ -n $inner && $inner != "$outer" ]]
	inner_port=$(auto_port "$inner" 0)
	grep -qx "inner $inner 0 2 $inner outer 0 2 $inner_port" "$inner_out"
	grep -qx "inner $inner 1 2 $inner outer 1 2 $inner_port" "$inner_out"
}

@test "a job without a model is left alone" {
	submit --nodes=2 --wrap 'env | grep -cE "^(MAD_(MODEL|ENV_FROM|NODE_RANK|JOB_DIR)|NODE_RANK|RANK|NNODES|WORLD_SIZE|MASTER_ADDR|MASTER_PORT)=" || true'
	assert_success
	[[ $(cat "$out") == 0 ]]
}

@test "bad values: sbatch exits non-zero, names the option, queues nothing" {
	before=$("$AS_USER" squeue -h -o %i | wc -l)
	while read -r opt value; do
		run "$AS_USER" sbatch "--mad-$opt=$value" --wrap true
		assert_failure
		assert_output --partial "mad: --mad-$opt: '$value'"
	done <<-'EOF'
		model bad/name
		scheduler pbs
		fanout tree
		nnodes x
		nnodes 0
		master-port 70000
		iface eth0;x
		run-dir relative/dir
		timeout 0
	EOF
	run "$AS_USER" sbatch --mad-nnodes=x --wrap true
	assert_output --partial "mad: --mad-nnodes: 'x' is not a number between 1 and 65536"
	[[ $("$AS_USER" squeue -h -o %i | wc -l) == "$before" ]]
	# the same values from the environment fail the job (task_init), never drain a node
	MAD_NNODES=x submit --mad-model=m --mad-fanout=array --array=0 --wrap 'echo ran'
	run cat "$MAD_CLUSTER_SHARED/plugin-$BATS_TEST_NUMBER.out"
	refute_output --partial ran
	run "$AS_USER" sinfo -h -R
	assert_output ''
}

@test "an unknown plugstack key is said at submit time" {
	echo "optional $so run-dir=$run_dir frobnicate=1" >"$MAD_CLUSTER_PLUGSTACK"
	run "$AS_USER" sbatch --hold --wrap true
	echo "optional $so run-dir=$run_dir" >"$MAD_CLUSTER_PLUGSTACK"
	assert_output --partial "mad: plugstack.conf: unknown argument 'frobnicate=1'"
	jobid=$(grep -o '[0-9]*$' <<<"$output" | tail -1)
	[[ -z $jobid ]] || "$AS_USER" scancel "$jobid"
}

# A held job (sbatch ARGS...) whose marker NAME is a symlink, planted by the
# user, to $victim/file, a root-owned file; runs it to its end.
planted_link_job() {
	local name=$1
	shift
	victim=$MAD_CLUSTER_DIR/root-only-$name
	rm -rf "$victim" && mkdir -m 0755 "$victim" && echo original >"$victim/file"
	run "$AS_USER" sbatch --parsable --hold "$@"
	jobid=${output%%;*}
	# the run folder keeps earlier runs' folders: the user plants a fresh one
	"$AS_USER" rm -rf "$run_dir/$jobid"
	"$AS_USER" mkdir -p "$run_dir/$jobid"
	"$AS_USER" ln -s "$victim/file" "$run_dir/$jobid/$name"
	"$AS_USER" scontrol release "$jobid"
	for _ in $(seq 60); do
		[[ -z $("$AS_USER" squeue -h -j "$jobid" 2>/dev/null) ]] && break
		sleep 0.5
	done
}

@test "markers: a planted symlink never makes root write through it" {
	# (a) the marker path is a symlink to a root-owned file
	planted_link_job done_rank0 --mad-model=m --wrap 'exit 3'
	[[ $(cat "$victim/file") == original ]]
	[[ -L $run_dir/$jobid/done_rank0 ]]
	# (b) the run folder itself is a symlink to a root-owned folder
	"$AS_USER" ln -sfn "$victim" "$MAD_CLUSTER_SHARED/evil-run"
	submit --mad-model=m --mad-run-dir="$MAD_CLUSTER_SHARED/evil-run" --wrap 'exit 0'
	[[ $(ls "$victim") == file ]]
	# nothing in the run folder is owned by root
	[[ -z $(find "$run_dir" -user root) ]]
}

@test "step markers: a symlink planted at a task's marker path never makes root write through it" {
	victim=$MAD_CLUSTER_DIR/root-only-step
	rm -rf "$victim" && mkdir -m 0755 "$victim" && echo original >"$victim/file"
	# the job's own script plants it in its folder (founded fresh by its batch step; a
	# folder planted before the job is passed over), before its step's tasks end as root
	submit --nodes=2 --mad-model=m \
		--wrap "ln -s '$victim/file' \"\$MAD_JOB_DIR/step0_rank1\"; echo job_dir=\$MAD_JOB_DIR; srun --nodes=2 --ntasks=2 sh -c 'exit 4'"
	dir=$(sed -n 's/^job_dir=//p' "$out")
	[[ -n $dir && -d $dir ]]
	[[ $(cat "$victim/file") == original ]]
	# the link was replaced by the marker, never written through; both are the user's
	[[ -f $dir/step0_rank1 && ! -L $dir/step0_rank1 ]]
	[[ $(head -1 "$dir/step0_rank1") == 4 && $(head -1 "$dir/step0_rank0") == 4 ]]
	[[ -z $(find "$dir" -user root) ]]
}

@test "step markers: one mad-writer per node and step, started by slurmstepd with an empty environment" {
	require strace "the suite installs it"
	writer=$(grep -ao '/[[:print:]]*/libexec/mad-spank/mad-writer' "$(mad_so)" | head -n 1)
	[[ -x $writer ]] || { echo "mad.so names '$writer', which is not there"; false; }
	trace=$BATS_TEST_TMPDIR/trace out=$MAD_CLUSTER_SHARED/plugin-$BATS_TEST_NUMBER.out
	# 2 nodes x 2 tasks: strace follows each node's slurmstepd of step 0 from its start
	run "$AS_USER" sbatch --parsable --nodes=2 --ntasks-per-node=2 --mad-model=m \
		--output="$out" --wrap 'echo job_dir=$MAD_JOB_DIR; sleep 2; srun sh -c "sleep 3"'
	assert_success
	jobid=${output%%;*}
	for _ in $(seq 200); do
		mapfile -t stepds < <(pgrep -f "^slurmstepd: \[$jobid\.0\]")
		((${#stepds[@]} == 2)) && break
		sleep 0.05
	done
	((${#stepds[@]} == 2)) || { echo "no slurmstepd of step $jobid.0 on both nodes"; false; }
	tracers=()
	for p in "${stepds[@]}"; do
		timeout 60 strace -f -qq -e trace=execve,clone,clone3,fork,vfork -o "$trace.$p" -p "$p" &
		tracers+=($!)
	done
	run "$AS_USER" timeout 120 mad-wait --interval 1 "$jobid"
	echo "$output"
	assert_success
	sleep 1
	kill -INT "${tracers[@]}" 2>/dev/null || true # a slurmstepd that lingers is detached from
	wait "${tracers[@]}" || true
	cat "$trace".*
	# each node's slurmstepd started mad-writer once for its two tasks, with an empty
	# environment, and no child of it ran on as a copy of slurmstepd to write them
	for p in "${stepds[@]}"; do
		run grep -cE "execve\(\"$writer\", \[\"mad-writer\"\], 0x[0-9a-f]+ /\\* 0 vars \\*/" "$trace.$p"
		assert_output 1
	done
	assert_four_step_markers "$out"
}

@test "step markers: a mad-writer that does not answer as this build's (killed, a loader's 127, another build's 80) leaves them to a fork of slurmstepd; one that answers is believed" {
	local end out why l ns logs=("$MAD_CLUSTER_DIR"/log/slurmd-n*.log) ours=()
	local -A lines
	# the installed mad-writer is shared: t/suite runs two clusters of one release at once,
	# one build's prefix under both, so the stand-in acts in this cluster's nodes alone (by
	# their network namespaces) and hands any other's request to the real writer
	require_netns "the stand-in tells this cluster's nodes by their network namespaces"
	writer=$(grep -ao '/[[:print:]]*/libexec/mad-spank/mad-writer' "$(mad_so)" | head -n 1)
	[[ -x $writer ]] || { echo "mad.so names '$writer', which is not there"; false; }
	saved_writer=$BATS_TEST_TMPDIR/mad-writer.saved
	cp -p "$writer" "$saved_writer"
	for ns in /run/netns/"$MAD_CLUSTER_NS_PREFIX"n[0-9]*; do
		ours+=("net:[$(stat -L -c %i "$ns")]")
	done
	((${#ours[@]} == MAD_CLUSTER_NODES)) || { echo "${#ours[@]} namespaces of $MAD_CLUSTER_NODES nodes"; false; }
	# root's own executable in root's folders, so mad.so starts it (design.md §10); each
	# says something on its standard error, which slurmd's log is to carry
	for end in 'kill -KILL $$' 'exit 127' 'exit 80' 'exit 83'; do
		{
			echo '#!/bin/sh'
			echo 'case $(/usr/bin/readlink /proc/self/ns/net) in'
			echo "$(IFS='|' && echo "${ours[*]}" | sed 's/\[/\\[/g; s/\]/\\]/g')) ;;"
			echo "*) exec '$saved_writer' ;;"
			echo 'esac'
			echo "echo 'stand-in: $end' >&2"
			echo "$end"
		} >"$BATS_TEST_TMPDIR/stand-in"
		place_writer "$BATS_TEST_TMPDIR/stand-in" "$writer"
		out=$MAD_CLUSTER_SHARED/plugin-$BATS_TEST_NUMBER.out
		for l in "${logs[@]}"; do lines[$l]=$(wc -l <"$l"); done
		run "$AS_USER" timeout 120 sbatch --wait --nodes=2 --ntasks-per-node=2 --mad-model=m \
			--output="$out" --wrap 'echo job_dir=$MAD_JOB_DIR; srun true'
		assert_success
		# what the nodes' slurmd logs say of this job: the lines since its submission
		for l in "${logs[@]}"; do tail -n +"$((lines[$l] + 1))" "$l"; done >"$BATS_TEST_TMPDIR/log"
		case $end in
		kill*) why='was killed by signal 9' ;;
		'exit 127') why='exited 127: stand-in: exit 127' ;;
		'exit 80') why='is of another build than this mad.so' ;;
		*) # 83, no job folder: believed, nothing written again, its words in the log
			grep -q "could not write the completion marker .*: no job folder of this attempt can be opened (stand-in: exit 83)" "$BATS_TEST_TMPDIR/log" ||
				{ echo "no slurmd log line for exit 83"; cat "$BATS_TEST_TMPDIR/log"; false; }
			! grep -q "the markers are written by a fork of slurmstepd" "$BATS_TEST_TMPDIR/log"
			look_anew "$out"
			[[ ! -e $(sed -n 's/^job_dir=//p' "$out")/step0_rank0 ]]
			continue
			;;
		esac
		assert_four_step_markers "$out"
		grep -q "$writer $why: the markers are written by a fork of slurmstepd" "$BATS_TEST_TMPDIR/log" ||
			{ echo "no slurmd log line: '$writer $why'"; cat "$BATS_TEST_TMPDIR/log"; false; }
	done
}

@test "scancel while peers wait for rank 0: the tasks end at once, no node drains" {
	run "$AS_USER" sbatch --parsable --hold --array=0-2 --exclusive --nodes=1 --mad-model=m \
		--mad-fanout=array --mad-timeout=600 --output=/dev/null --wrap 'sleep 1'
	assert_success
	jobid=${output%%;*}
	"$AS_USER" scontrol release "${jobid}_[1-2]"
	for _ in $(seq 60); do
		[[ $(pgrep -u "$MAD_CLUSTER_USER" -x mad-rendezvous | wc -l) -eq 2 ]] && break
		sleep 0.5
	done
	[[ $(pgrep -u "$MAD_CLUSTER_USER" -x mad-rendezvous | wc -l) -eq 2 ]]
	"$AS_USER" scancel "$jobid"
	for _ in $(seq 40); do
		pgrep -u "$MAD_CLUSTER_USER" -x mad-rendezvous >/dev/null || break
		sleep 0.5
	done
	run pgrep -u "$MAD_CLUSTER_USER" -x mad-rendezvous
	assert_failure
	sleep 2
	run "$AS_USER" sinfo -h -R
	assert_output ''
}
