// SPDX-License-Identifier: GPL-2.0-or-later
//! spurd-spank: spur's real SPANK host for the tests.  The host itself is spur's
//! `crates/spur-spank/src/lib.rs`, built unchanged from spur's source tarball (its
//! `parse_plugstack`, `SpankHost::load_plugin`/`invoke_hook`, `SpankHandle`, and the 15
//! exported `spank_*`/`slurm_*` functions, exported by spurd's own `crates/spurd/build.rs`).
//! This driver, written for mad-spank (not copied), calls it as spurd does:
//!  - `crates/spurd/src/agent_server.rs` (AgentServer::new): the plugstack named by
//!    SPUR_PLUGSTACK (here: the first argument) is parsed and every plugin loaded ONCE; a
//!    plugin that fails to load warns (required) or is skipped (optional); no plugin loaded
//!    is no host; a plugstack that cannot be parsed warns.
//!  - `crates/spurd/src/executor.rs` (spawn_job_process): `Init` then `TaskInit` on one
//!    `SpankHandle` seeded with the job env and a context of job id, uid and gid only, a
//!    failed hook warns and the job runs anyway, the handle's env becomes the job's, and
//!    the job is spawned with `.envs(&env)` and no `env_clear` (spurd's own environment lies
//!    beneath the job env).
//!  - `agent_server.rs` (the completion monitor): after the job's process ended,
//!    `TaskExit` then `JobEpilog` on a fresh handle with the same context and an EMPTY env.
//!  - spurd runs launches on tokio workers at once, all on the one `SpankHost`: `--jobs N
//!    --concurrent K` runs generated jobs on K threads sharing it.
//! What is NOT spur's code: the job env itself (the gRPC launch request and `SpurEnv`,
//! modelled in t/spur/lib.sh), the log format (spurd uses tracing-subscriber's fmt, which
//! Debian 12 lacks; `Log` below writes its "LEVEL target: message fields" without the
//! timestamp), and `--now` (a check of ours: lib.rs only ever loads with RTLD_LAZY).
//!
//! Usage:
//!   spurd-spank [--now] [--trace] PLUGSTACK [NAME=VALUE...] [-- CMD...]
//!   spurd-spank [--now] --jobs N [--concurrent K] PLUGSTACK [NAME=VALUE...]
//! One job: the hooks, then CMD (its exit status is ours), then TaskExit and JobEpilog;
//! without CMD, the job env is printed, sorted.  --jobs: N generated jobs (job i:
//! SLURM_JOB_ID=2000+i, node rank i%4 of 4, every second one without MAD_MODEL), K at a
//! time; each job's env must be its own, the first 16 give the same env when run again at
//! the end, and RSS and open fds are reported after the first quarter (the warm-up), after
//! half the rest, and at the end.  --now first opens each plugin with RTLD_NOW (it must
//! load so: mad.so has no hard reference to a function spur lacks); --trace says on stderr
//! when the hooks ran.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

use spur_spank::{parse_plugstack, SpankContext, SpankHandle, SpankHook, SpankHost};

const JOB_BASE: u32 = 2000;

// ------------------------------------------------------------------ logging

/// A tracing subscriber printing what spurd's fmt subscriber prints, on stderr.
struct Log {
    max: tracing::Level,
    off: bool,
}

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{:?}{}", value, self.0);
        } else {
            self.0.push_str(&format!(" {}={:?}", field.name(), value));
        }
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.0 = format!("{}{}", value, self.0);
        } else {
            self.0.push_str(&format!(" {}={}", field.name(), value));
        }
    }
}

impl tracing::Subscriber for Log {
    fn register_callsite(
        &self,
        m: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        if self.enabled(m) {
            tracing::subscriber::Interest::always()
        } else {
            tracing::subscriber::Interest::never()
        }
    }
    fn enabled(&self, m: &tracing::Metadata<'_>) -> bool {
        !self.off && *m.level() <= self.max
    }
    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(if self.off {
            tracing::level_filters::LevelFilter::OFF
        } else {
            tracing::level_filters::LevelFilter::from_level(self.max)
        })
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, e: &tracing::Event<'_>) {
        let mut f = Fields(String::new());
        e.record(&mut f);
        let m = e.metadata();
        let line = format!("spurd: {:>5} {}: {}\n", m.level(), m.target(), f.0);
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// spurd's default filter is "info" (crates/spurd/src/main.rs, --log-level), RUST_LOG
/// overriding it; only a plain level name is understood here.
fn init_log(quiet: bool) {
    let want = std::env::var("RUST_LOG").ok();
    let (max, off) = match want.as_deref().map(str::to_ascii_lowercase).as_deref() {
        Some("off") => (tracing::Level::ERROR, true),
        Some("error") => (tracing::Level::ERROR, false),
        Some("warn") => (tracing::Level::WARN, false),
        Some("debug") => (tracing::Level::DEBUG, false),
        Some("trace") => (tracing::Level::TRACE, false),
        Some(_) => (tracing::Level::INFO, false),
        None => (tracing::Level::INFO, quiet),
    };
    let _ = tracing::subscriber::set_global_default(Log { max, off });
}

// ------------------------------------------------------------------ the host

/// agent_server.rs AgentServer::new, from the plugstack on.
fn load_host(plugstack: &Path, now: bool, keep: &mut Vec<libloading::os::unix::Library>) -> Option<SpankHost> {
    if !plugstack.exists() {
        return None;
    }
    match parse_plugstack(plugstack) {
        Ok(entries) => {
            let mut host = SpankHost::new();
            for entry in &entries {
                if now {
                    let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL;
                    match unsafe { libloading::os::unix::Library::open(Some(&entry.path), flags) } {
                        Ok(lib) => keep.push(lib),
                        Err(e) => {
                            eprintln!("spurd-spank: --now: {} does not load with RTLD_NOW: {e}", entry.path.display());
                            std::process::exit(1);
                        }
                    }
                }
                if let Err(e) = host.load_plugin(&entry.path, &entry.args) {
                    if entry.required {
                        tracing::warn!(target: "spurd::agent_server", plugin = %entry.path.display(), error = %e,
                            "required SPANK plugin failed to load");
                    } else {
                        tracing::info!(target: "spurd::agent_server", plugin = %entry.path.display(), error = %e,
                            "optional SPANK plugin failed to load, skipping");
                    }
                }
            }
            if host.plugin_count() > 0 {
                tracing::info!(target: "spurd::agent_server", count = host.plugin_count(), "SPANK plugins loaded");
                Some(host)
            } else {
                None
            }
        }
        Err(e) => {
            tracing::warn!(target: "spurd::agent_server", path = %plugstack.display(), error = %e,
                "failed to parse plugstack.conf");
            None
        }
    }
}

extern "C" {
    fn getuid() -> u32;
    fn getgid() -> u32;
    fn kill(pid: i32, sig: i32) -> i32;
    fn signal(sig: i32, handler: extern "C" fn(i32)) -> usize;
}

fn context(job_id: u32) -> SpankContext {
    SpankContext {
        job_id,
        uid: unsafe { getuid() },
        gid: unsafe { getgid() },
        ..Default::default()
    }
}

/// executor.rs spawn_job_process: Init, TaskInit on one handle; its env is the job's.
fn job_start(host: Option<&SpankHost>, ctx: &SpankContext, env: HashMap<String, String>, trace: bool) -> HashMap<String, String> {
    let Some(spank) = host else {
        if trace {
            eprintln!("spurd-spank: job {}: no SPANK plugin loaded, no hook ran", ctx.job_id);
        }
        return env;
    };
    let job_id = ctx.job_id;
    let mut handle = SpankHandle::new(ctx.clone(), env);
    for hook in [SpankHook::Init, SpankHook::TaskInit] {
        if let Err(e) = spank.invoke_hook(hook, &mut handle) {
            tracing::warn!(target: "spurd::executor", job_id, error = %e, "SPANK hook failed");
        }
    }
    if trace {
        let n = spank.plugin_count();
        eprintln!("spurd-spank: job {job_id}: init, task_init ran ({n} plugin{} loaded)", if n == 1 { "" } else { "s" });
    }
    handle.env
}

/// agent_server.rs, a completed job: TaskExit, JobEpilog on a fresh handle, empty env.
fn job_end(host: Option<&SpankHost>, ctx: &SpankContext, trace: bool) {
    let Some(spank_host) = host else { return };
    let job_id = ctx.job_id;
    let mut handle = SpankHandle::new(
        SpankContext { job_id: ctx.job_id, uid: ctx.uid, gid: ctx.gid, ..Default::default() },
        HashMap::new(),
    );
    if let Err(e) = spank_host.invoke_hook(SpankHook::TaskExit, &mut handle) {
        tracing::warn!(target: "spurd::agent_server", job_id, error = %e, "SPANK TaskExit hook failed");
    }
    if let Err(e) = spank_host.invoke_hook(SpankHook::JobEpilog, &mut handle) {
        tracing::warn!(target: "spurd::agent_server", job_id, error = %e, "SPANK JobEpilog hook failed");
    }
    if trace {
        eprintln!("spurd-spank: job {job_id}: task_exit, job_epilog ran");
    }
}

fn seed(vars: &[String]) -> HashMap<String, String> {
    let mut env = HashMap::new();
    for v in vars {
        if let Some((k, val)) = v.split_once('=') {
            env.insert(k.to_string(), val.to_string());
        }
    }
    env
}

fn sorted(env: &HashMap<String, String>) -> Vec<String> {
    let mut v: Vec<String> = env.iter().map(|(k, val)| format!("{k}={val}")).collect();
    v.sort();
    v
}

static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: i32) {
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        unsafe { kill(pid, sig) };
    }
}

fn run_one(host: Option<&SpankHost>, vars: &[String], cmd: &[String], trace: bool) -> i32 {
    let env = seed(vars);
    let job_id = env.get("SLURM_JOB_ID").and_then(|s| s.parse().ok()).unwrap_or(0);
    let ctx = context(job_id);
    let env = job_start(host, &ctx, env, trace);
    let mut status = 0;
    if !cmd.is_empty() {
        for sig in [15, 2, 1] {
            unsafe { signal(sig, forward) };
        }
        let _ = std::io::stdout().flush();
        match Command::new(&cmd[0]).args(&cmd[1..]).envs(&env).spawn() {
            Ok(mut child) => {
                CHILD.store(child.id() as i32, Ordering::SeqCst);
                status = match child.wait() {
                    Ok(s) => s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)),
                    Err(e) => {
                        eprintln!("spurd-spank: wait: {e}");
                        2
                    }
                };
            }
            Err(e) => {
                eprintln!("spurd-spank: cannot run {}: {e}", cmd[0]);
                status = 127;
            }
        }
    } else {
        let mut out = std::io::stdout().lock();
        for line in sorted(&env) {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }
    job_end(host, &ctx, trace);
    status
}

// ------------------------------------------------------------------ many jobs

fn fnv(mut h: u64, s: &str) -> u64 {
    for b in s.bytes() {
        h = (h ^ b as u64).wrapping_mul(1099511628211);
    }
    (h ^ b'\n' as u64).wrapping_mul(1099511628211)
}

/// One generated job, as spur's launch would give it to the plugins (one task per node, 4
/// nodes; the first node's name resolves), with EXTRA; its env's hash, or 0 when its env
/// is not its own.
fn run_generated(host: Option<&SpankHost>, i: usize, extra: &[String]) -> u64 {
    let rank = i % 4;
    let model = i % 2 == 0;
    let job = JOB_BASE + i as u32;
    let mut vars = vec![
        format!("SLURM_JOB_ID={job}"),
        format!("SPUR_JOB_ID={job}"),
        format!("SLURM_NODEID={rank}"),
        format!("SPUR_NODE_RANK={rank}"),
        format!("NODE_RANK={rank}"),
        format!("SLURM_PROCID={rank}"),
        "SLURM_NNODES=4".to_string(),
        "SLURM_JOB_NUM_NODES=4".to_string(),
        "SLURM_JOB_NODELIST=198.51.100.1,n2,n3,n4".to_string(),
        "MASTER_ADDR=198.51.100.1.spur.test".to_string(),
        format!("MAD_EMU_JOB={i}"),
    ];
    if model {
        vars.push("MAD_MODEL=m".to_string());
    }
    vars.extend(extra.iter().take(64).cloned());
    let seeded = seed(&vars);
    let before = seeded.len();
    let ctx = context(job);
    let env = job_start(host, &ctx, seeded.clone(), false);
    job_end(host, &ctx, false);
    let ok = if !model {
        // no model: the plugin must leave the env exactly as it was
        env.len() == before && !env.contains_key("MAD_ENV_FROM")
    } else {
        let id = job.to_string();
        let mut ok = env.get("MAD_COLLECT_JOB_ID") == Some(&id)
            && env.contains_key("MAD_ENV_FROM")
            && env.get("MAD_EMU_JOB").and_then(|v| v.parse::<usize>().ok()) == Some(i);
        // no value the plugin set may name another job's id
        for (k, v) in &env {
            if !ok {
                break;
            }
            if !k.starts_with("MAD_") || seeded.get(k) == Some(v) {
                continue;
            }
            for num in v.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()) {
                if let Ok(n) = num.parse::<u64>() {
                    if n >= JOB_BASE as u64 && n < JOB_BASE as u64 + 1_000_000 && n != job as u64 {
                        ok = false;
                    }
                }
            }
        }
        ok
    };
    let mut h: u64 = 1469598103934665603;
    for line in sorted(&env) {
        h = fnv(h, &line);
    }
    if ok {
        h.max(1)
    } else {
        0
    }
}

fn rss_kb() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l[6..].trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(-1)
}

fn open_fds() -> i64 {
    match std::fs::read_dir("/proc/self/fd") {
        Ok(d) => d.count() as i64 - 1, // the one read_dir holds
        Err(_) => -1,
    }
}

struct Round {
    next: AtomicUsize,
    last: AtomicUsize,
    sum: Vec<AtomicU64>,
    wrong: AtomicUsize,
}

fn drain(host: Option<&SpankHost>, r: &Round, extra: &[String]) {
    loop {
        let i = r.next.fetch_add(1, Ordering::SeqCst);
        if i >= r.last.load(Ordering::SeqCst) {
            return;
        }
        let h = run_generated(host, i, extra);
        r.sum[i].store(h, Ordering::SeqCst);
        if h == 0 {
            r.wrong.fetch_add(1, Ordering::SeqCst);
        }
    }
}

fn run_many(host: Option<SpankHost>, jobs: usize, k: usize, extra: Vec<String>) -> i32 {
    let host = Arc::new(host);
    let extra = Arc::new(extra);
    let round = Arc::new(Round {
        next: AtomicUsize::new(0),
        last: AtomicUsize::new(0),
        sum: (0..jobs).map(|_| AtomicU64::new(0)).collect(),
        wrong: AtomicUsize::new(0),
    });
    // spurd's workers: started once, each round's jobs run on them as they come
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut workers = Vec::new();
    let mut starts = Vec::new();
    if k > 1 {
        for _ in 0..k {
            let (tx, rx) = mpsc::channel::<bool>();
            let (h, r, x, d) = (host.clone(), round.clone(), extra.clone(), done_tx.clone());
            workers.push(std::thread::spawn(move || {
                while let Ok(true) = rx.recv() {
                    drain((*h).as_ref(), &r, &x);
                    let _ = d.send(());
                }
            }));
            starts.push(tx);
        }
    }
    let run_round = |from: usize, to: usize| {
        round.next.store(from, Ordering::SeqCst);
        round.last.store(to, Ordering::SeqCst);
        if k <= 1 {
            drain((*host).as_ref(), &round, &extra);
            return;
        }
        for s in &starts {
            let _ = s.send(true);
        }
        for _ in 0..k {
            let _ = done_rx.recv();
        }
    };
    let warm = if jobs / 4 > k { jobs / 4 } else { k.min(jobs) };
    let mid = warm + (jobs - warm) / 2;
    let again = jobs.min(16);
    // the first quarter warms up what is allocated once (malloc arenas, thread caches, the
    // resolver); then two equal rounds: what one job leaks grows from one to the next
    run_round(0, warm);
    let (rss0, fd0) = (rss_kb(), open_fds());
    run_round(warm, mid);
    let (rss1, fd1) = (rss_kb(), open_fds());
    run_round(mid, jobs);
    // the first jobs again, after all the others: the same env, or state leaked
    let differ = (0..again)
        .filter(|&i| run_generated((*host).as_ref(), i, &extra) != round.sum[i].load(Ordering::SeqCst))
        .count();
    let (rss2, fd2) = (rss_kb(), open_fds());
    let n = (*host).as_ref().map_or(0, |h| h.plugin_count());
    let wrong = round.wrong.load(Ordering::SeqCst);
    println!(
        "{jobs} jobs, {} at a time, {n} plugin{} loaded once: {wrong} with a wrong env, {differ} of {again} different when run again; rss {rss0} kB -> {rss1} kB -> {rss2} kB; fds {fd0} -> {fd1} -> {fd2}",
        k.max(1),
        if n == 1 { "" } else { "s" }
    );
    drop(starts);
    for w in workers {
        let _ = w.join();
    }
    if wrong > 0 || differ > 0 {
        1
    } else {
        0
    }
}

// ------------------------------------------------------------------ main

fn number(opt: &str, s: Option<&String>, max: usize) -> usize {
    match s.and_then(|s| s.parse::<usize>().ok()) {
        Some(v) if v >= 1 && v <= max => v,
        _ => {
            eprintln!("spurd-spank: {opt}: '{}' is not a number from 1 to {max}", s.map_or("", |s| s.as_str()));
            std::process::exit(2);
        }
    }
}

/// The ASan build's mad.so needs the sanitizer runtimes loaded first: make check names them
/// in MAD_SPURD_PRELOAD (Makefile.am), and the host runs itself again with them preloaded;
/// the jobs it runs inherit neither variable.
fn preload() {
    use std::os::unix::process::CommandExt;
    let Ok(libs) = std::env::var("MAD_SPURD_PRELOAD") else { return };
    if std::env::var_os("MAD_SPURD_PRELOADED").is_some() {
        for v in ["LD_PRELOAD", "MAD_SPURD_PRELOAD", "MAD_SPURD_PRELOADED"] {
            std::env::remove_var(v);
        }
        return;
    }
    if libs.trim().is_empty() {
        std::env::remove_var("MAD_SPURD_PRELOAD");
        return;
    }
    let e = Command::new("/proc/self/exe")
        .arg0(std::env::args().next().unwrap_or_default())
        .args(std::env::args().skip(1))
        .env("LD_PRELOAD", libs)
        .env("MAD_SPURD_PRELOADED", "1")
        .exec();
    eprintln!("spurd-spank: cannot run itself again with MAD_SPURD_PRELOAD: {e}");
    std::process::exit(2);
}

fn main() {
    preload();
    let argv: Vec<String> = std::env::args().collect();
    let (mut now, mut trace, mut jobs, mut k) = (false, false, 0usize, 1usize);
    let mut a = 1;
    while a < argv.len() && argv[a].starts_with("--") && argv[a].len() > 2 {
        match argv[a].as_str() {
            "--now" => now = true,
            "--trace" => trace = true,
            "--jobs" => {
                a += 1;
                jobs = number("--jobs", argv.get(a), 1_000_000);
            }
            "--concurrent" => {
                a += 1;
                k = number("--concurrent", argv.get(a), 256);
            }
            o => {
                eprintln!("spurd-spank: unknown option {o}");
                std::process::exit(2);
            }
        }
        a += 1;
    }
    if a >= argv.len() {
        eprintln!(
            "usage: spurd-spank [--now] [--trace] PLUGSTACK [NAME=VALUE...] [-- CMD...]\n       spurd-spank [--now] --jobs N [--concurrent K] PLUGSTACK [NAME=VALUE...]"
        );
        std::process::exit(2);
    }
    // a thousand jobs' log lines say nothing the checks do not
    init_log(jobs > 0);
    let mut keep = Vec::new();
    let host = load_host(Path::new(&argv[a]), now, &mut keep);
    a += 1;
    let rest = &argv[a..];
    let (vars, cmd) = match rest.iter().position(|s| s == "--") {
        Some(p) => (&rest[..p], &rest[p + 1..]),
        None => (rest, &rest[rest.len()..]),
    };
    let rc = if jobs > 0 {
        run_many(host, jobs, k, vars.to_vec())
    } else {
        let rc = run_one(host.as_ref(), vars, cmd, trace);
        drop(host);
        rc
    };
    drop(keep);
    std::process::exit(rc);
}
