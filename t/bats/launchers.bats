#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# templates/launchers/*.sh.j2: every launcher template renders for every
# scheduler and fan-out to a script that bash parses and shellcheck passes,
# shares its head and body with templates/job.sh.j2 word for word, carries
# no rank or address logic (every value from the contract), hands each
# launcher exactly the flags its interface names (man 8 mad), and is installed and
# documented.  The jobs themselves: t/bats/cluster-launchers.bats.
# shellcheck disable=SC2016,SC1003 # literal $VARS and backslashes are the test data

bats_require_minimum_version 1.5.0

setup() {
	load ../lib.sh
	load_helpers
	dir=$MAD_SRCDIR/templates/launchers
	data=$dir/example.yaml
	launchers=(accelerate deepspeed megatron sglang srun torchrun vllm-ray)
}

# The text of template FILE between the line starting with MARK and the
# "end of the shared MARK" line.
shared_part() { # file mark
	awk -v mark="$2" 'index($0, "{# ---- shared " mark) == 1 { on = 1 }
		on { print } index($0, "{# ---- end of the shared " mark) == 1 { exit }' "$1"
}

@test "launchers: the seven templates are there, no more, no fewer" {
	run bash -c "cd '$dir' && ls *.sh.j2"
	assert_output "$(printf '%s.sh.j2\n' "${launchers[@]}")"
}

@test "launchers: every template x scheduler x fan-out renders, bash -n and shellcheck clean" {
	require shellcheck "lints the rendered scripts"
	local n=0 l sch fo out
	for l in "${launchers[@]}"; do
		for sch in slurm spur; do
			for fo in nodes array; do
				out=$BATS_TEST_TMPDIR/$l-$sch-$fo.sh
				run mad-render -c "$data" -D "scheduler=$sch" -D "fanout=$fo" -D run_dir=/shared/mad \
					-o "$out" "$dir/$l.sh.j2"
				assert_success
				bash -n "$out"
				shellcheck -s bash "$out" || { cat -n "$out"; false; }
				n=$((n + 1))
			done
		done
	done
	echo "# $n scripts" >&3
	((n == 28))
}

@test "launchers: head and body are job.sh.j2's, word for word" {
	local l part
	for part in head body; do
		shared_part "$MAD_SRCDIR/templates/job.sh.j2" "$part" >"$BATS_TEST_TMPDIR/job.$part"
		[[ $(wc -l <"$BATS_TEST_TMPDIR/job.$part") -gt 5 ]]
		for l in "${launchers[@]}"; do
			shared_part "$dir/$l.sh.j2" "$part" | diff "$BATS_TEST_TMPDIR/job.$part" - ||
				{ echo "$l.sh.j2: the shared $part differs from job.sh.j2's"; false; }
		done
	done
}

@test "launchers: no rank or address logic in a rendered script, only the contract's variables" {
	local l sch fo out
	for l in "${launchers[@]}"; do
		for sch in slurm spur; do
			for fo in nodes array; do
				out=$BATS_TEST_TMPDIR/s.sh
				mad-render -c "$data" -D "scheduler=$sch" -D "fanout=$fo" -o "$out" "$dir/$l.sh.j2"
				# what job scripts compute ranks and addresses with, and must not
				run grep -nE 'scontrol|SLURM_(PROCID|NODEID|LOCALID|JOB_NODELIST|NODELIST|ARRAY_TASK_ID|NNODES|NTASKS)|SPUR_|hostname|getent|head -1|ip (-4 )?addr|seq |for .* in \$' "$out"
				assert_failure 1
				# every launcher reads the contract in its own task
				[[ $l == deepspeed && $fo == array ]] || grep -q 'eval "$(mad-env)" || exit 1' "$out"
			done
		done
	done
}

# The launcher's line in the nodes fan-out script on SLURM, joined at its backslashes.
launch_text() { # launcher
	mad-render -c "$data" -D run_dir=/shared/mad "$dir/$1.sh.j2" | sed -e ':a' -e '/\\$/N; s/\\\n\t*//; ta'
}

@test "launchers: the serving templates share one serve block: ready once /health answers, IPv6 in brackets" {
	shared_part "$dir/vllm-ray.sh.j2" serve >"$BATS_TEST_TMPDIR/serve"
	grep -qxF 'until curl --noproxy "*" -fs --max-time 5 -o /dev/null "$url/health"; do' "$BATS_TEST_TMPDIR/serve"
	grep -qxF 'mad-mark --ready "$url"' "$BATS_TEST_TMPDIR/serve"
	shared_part "$dir/sglang.sh.j2" serve | diff "$BATS_TEST_TMPDIR/serve" - ||
		{ echo "sglang.sh.j2: the shared serve block differs from vllm-ray.sh.j2's"; false; }
	# the endpoint a pipeline gets, for an IPv4 and an IPv6 MASTER_ADDR
	local code
	code=$(sed -n '/^url=/p; /^case /p' "$BATS_TEST_TMPDIR/serve")
	run bash -c "MASTER_ADDR=10.1.2.3 port=30000; $code; echo \$url"
	assert_output http://10.1.2.3:30000
	run bash -c "MASTER_ADDR=fd6d:6164::b port=8000; $code; echo \$url"
	assert_output 'http://[fd6d:6164::b]:8000'
}

# Runs the serve block (its text between the quotes) after a stand-in server that exits
# with 3 after a moment, with PATH holding only sleep, uname, a mad-mark that logs its
# arguments, and curl when $1 is "curl" (one that answers at once and logs its arguments).
run_serve_block() { # curl|no-curl
	local bin=$BATS_TEST_TMPDIR/bin-$1 block
	mkdir -p "$bin"
	ln -sf "$(command -v sleep)" "$(command -v uname)" "$bin/"
	printf '#!/bin/bash\necho "mad-mark $*" >>%q\n' "$BATS_TEST_TMPDIR/calls-$1" >"$bin/mad-mark"
	if [[ $1 == curl ]]; then
		printf '#!/bin/bash\necho "curl $*" >>%q\n' "$BATS_TEST_TMPDIR/calls-$1" >"$bin/curl"
	fi
	chmod +x "$bin"/*
	block=$(shared_part "$dir/sglang.sh.j2" serve | sed -e '1d' -e '$d' -e "s/'\$//")
	run env -i PATH="$bin" MASTER_ADDR=10.1.2.3 port=30000 /bin/bash -c "(sleep 0.3; exit 3) & $block"
}

@test "launchers: the serve block marks ready once curl answers, straight to the node; without curl it says so" {
	run_serve_block curl
	[[ $status == 3 ]] # the server's status, after it ended
	run cat "$BATS_TEST_TMPDIR/calls-curl"
	assert_line 'curl --noproxy * -fs --max-time 5 -o /dev/null http://10.1.2.3:30000/health'
	assert_line 'mad-mark --ready http://10.1.2.3:30000'
	run_serve_block no-curl
	[[ $status == 3 ]]
	assert_output --partial "mad: no curl on "
	assert_output --partial "the job serves but is never marked ready"
	[[ ! -e $BATS_TEST_TMPDIR/calls-no-curl ]] # no mad-mark --ready
}

@test "launchers: each launcher gets exactly the flags its interface names, from the contract" {
	run launch_text torchrun
	assert_output --partial 'exec "$launcher" --nnodes="$NNODES" --node_rank="$NODE_RANK" --nproc_per_node="$MAD_NPROC_PER_NODE" --master_addr="$MASTER_ADDR" --master_port="$MASTER_PORT" "$@"'
	refute_output --partial 'rdzv'
	run launch_text deepspeed
	assert_output --partial 'mad-hostlist expand --format=deepspeed --slots="$MAD_NPROC_PER_NODE" >"$hostfile"'
	assert_output --partial '"$launcher" --hostfile="$hostfile" --no_ssh --node_rank="$NODE_RANK" --master_addr="$MASTER_ADDR" --master_port="$MASTER_PORT" "$@"'
	run launch_text accelerate
	assert_output --partial 'exec "$launcher" launch --num_machines="$NNODES" --num_processes="$((NNODES * MAD_NPROC_PER_NODE))" --machine_rank="$NODE_RANK" --main_process_ip="$MASTER_ADDR" --main_process_port="$MASTER_PORT" "$@"'
	run launch_text sglang
	assert_output --partial 'set -- -m sglang.launch_server --nnodes="$NNODES" --node-rank="$NODE_RANK" --dist-init-addr="$init" --tp-size="$((NNODES * MAD_NPROC_PER_NODE))" "$@"'
	# --dist-init-addr as SGLang parses it: HOST:PORT, an IPv6 address in brackets
	local code
	code=$(grep -E '^(init=|case .* init=)' <<<"$output")
	[[ $(wc -l <<<"$code") == 2 ]]
	[[ $(MASTER_ADDR=10.1.2.3 MASTER_PORT=29400 bash -c "$code; echo \$init") == 10.1.2.3:29400 ]]
	[[ $(MASTER_ADDR=fd6d:6164::b MASTER_PORT=29400 bash -c "$code; echo \$init") == '[fd6d:6164::b]:29400' ]]
	assert_output --partial '[ "$NODE_RANK" = 0 ] || exec "$python" "$@"'
	# rank 0 serves HTTP on its own address, and is ready once the health check answers
	assert_output --partial '"$python" "$@" --host="$MASTER_ADDR" --port="$port" &'
	assert_output --partial 'bash -c "$task" mad-task python3 30000 '
	run launch_text vllm-ray
	assert_output --partial '"$ray" start --head --node-ip-address="$MASTER_ADDR" --port="$MASTER_PORT" || exit 1'
	assert_output --partial 'exec "$ray" start --address="$MASTER_ADDR:$MASTER_PORT" --block'
	# the head enters the barrier only once it is up; workers start Ray only after it
	[[ $(grep -c 'eval "$(mad-env --barrier)"' <<<"$output") == 2 ]]
	# rank 0 is ready once vLLM's health check answers, not when the server was started
	assert_output --partial '"$vllm" serve "$@" --host="$MASTER_ADDR" --port="$port" --tensor-parallel-size="$MAD_NPROC_PER_NODE" --pipeline-parallel-size="$NNODES" --distributed-executor-backend=ray &'
	run launch_text megatron
	assert_output --partial 'exec "$@" --tensor-model-parallel-size="$MAD_NPROC_PER_NODE" --pipeline-model-parallel-size="$NNODES"'
	assert_output --partial '#SBATCH --ntasks-per-node=8'
	run launch_text srun
	assert_output --partial '#SBATCH --ntasks-per-node=8'
	assert_output --partial "srun --kill-on-bad-exit=1 bash -c 'eval \"\$(mad-env)\" || exit 1; exec \"\$@\"' mad-task train.py --epochs 1"
}

@test "launchers: one agent per node on SLURM's nodes fan-out, the script itself per node elsewhere" {
	local l
	for l in accelerate deepspeed sglang torchrun vllm-ray; do
		run mad-render -c "$data" "$dir/$l.sh.j2"
		assert_line 'srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --kill-on-bad-exit=1 \'
		run mad-render -c "$data" -D scheduler=spur "$dir/$l.sh.j2"
		refute_output --partial 'srun'
	done
	# an array task has only its own node in its node list: DeepSpeed's hostfile cannot be made
	run mad-render -c "$data" -D fanout=array "$dir/deepspeed.sh.j2"
	assert_output --partial "needs the job's node list, which an array task does not have"
	run bash -c "mad-render -c '$data' -D fanout=array '$dir/deepspeed.sh.j2' | PATH=/nonexistent /bin/bash"
	assert_failure 64
}

@test "launchers: hostile command words stay single words in the launcher's argv" {
	cd "$BATS_TEST_TMPDIR"
	mkdir bin
	printf '#!/bin/sh\ntrue\n' >bin/mad-mark
	# mad-env stand-in: a contract for node 1 of 2
	printf '#!/bin/sh\necho "export NNODES=2 NODE_RANK=1 MAD_NPROC_PER_NODE=4 MASTER_ADDR=10.0.0.1 MASTER_PORT=23456"\n' >bin/mad-env
	printf '#!/bin/bash\nwhile [[ $1 == --* ]]; do shift; done\nexec "$@"\n' >bin/srun
	printf '#!/bin/sh\nprintf "%%s\\n" "$@"\n' >bin/torchrun
	chmod +x bin/*
	printf '{"command": ["t.py", "a b", "$(touch PWNED)", "*", ""]}' >cmd.json
	mad-render -c "$data" -c cmd.json -o job.sh "$dir/torchrun.sh.j2"
	run env PATH="$PWD/bin:$PATH" bash job.sh
	assert_success
	assert_output "$(printf '%s\n' --nnodes=2 --node_rank=1 --nproc_per_node=4 --master_addr=10.0.0.1 \
		--master_port=23456 t.py 'a b' '$(touch PWNED)' '*' '')"
	[[ ! -e PWNED ]]
}

@test "launchers: installed with make install and listed in mad-render(1)" {
	local l
	for l in "${launchers[@]}"; do
		grep -q "templates/launchers/$l.sh.j2" "$MAD_SRCDIR/Makefile.am"
		grep -qF "launchers/${l//-/\\-}.sh.j2" "$MAD_SRCDIR/doc/mad-render.1" ||
			{ echo "doc/mad-render.1 does not list launchers/$l.sh.j2"; false; }
	done
	grep -q 'templates/launchers/example.yaml' "$MAD_SRCDIR/Makefile.am"
}
