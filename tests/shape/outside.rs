//! The blocking claims by URL, where only a timing from outside is to be had: on a service
//! in a process of its own (this test binary, started again as a server), whose CPU time
//! splits a hold into computing and waiting. A blocking wait is broken, an async one holds,
//! a fast route is inconclusive — too short for a timing from outside — and computing is
//! inconclusive, since from outside one long poll and many short ones read the same (or,
//! with the machine busy besides, since the service could not have the CPU it wanted).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use perfshape::{PoolSettings, Result, Target, Verdict, assert_shape, runtime::Server};

use crate::common::handlers;
use crate::common::process::Served;

/// The environment variable that makes [`serve_in_a_process_of_its_own`] serve.
const SERVE: &str = "PERFSHAPE_TEST_SERVE";

/// Not a test of its own: the server the URL tests start as a separate process (this very
/// binary, run with `--ignored --exact`). It serves the handlers on one worker, prints its
/// address, and stops when its standard input closes or after a minute.
#[test]
#[ignore = "started by the URL tests as a process of its own"]
fn serve_in_a_process_of_its_own() -> Result {
    if std::env::var_os(SERVE).is_none() {
        return Ok(());
    }
    let server = Server::serve(
        perfshape::runtime::Pool::new("served", PoolSettings::workers(1)?)?,
        handlers::app(),
    )?;
    println!("listening on {}", server.base_url());
    let started = Instant::now();
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        let _ = done.send(());
    });
    let _ = wait.recv_timeout(Duration::from_secs(60).saturating_sub(started.elapsed()));
    Ok(())
}

/// The handlers in a process of their own: this very test binary, serving.
fn served() -> Served {
    let mut command = Command::new(std::env::current_exe().expect("this test binary"));
    command
        .args([
            "--ignored",
            "--exact",
            "outside::serve_in_a_process_of_its_own",
        ])
        .args(["--nocapture", "--test-threads", "1"])
        .env(SERVE, "1")
        .stderr(Stdio::null());
    Served::start(command)
}

#[test]
fn by_url_a_blocking_wait_is_broken_and_an_async_one_holds() -> Result {
    let served = served();
    let target = Target::url(&served.base)?;
    let blocking = target
        .get("/wait?us=20000&ms=20")
        .does_not_block_its_worker()
        .check()?;
    let Some(verdict) = crate::common::decided(&blocking) else {
        return Ok(());
    };
    assert_eq!(verdict, Verdict::Broken, "{}", blocking.report());
    let said = format!("{:#}", blocking.report());
    // The service's own CPU splits the hold: nearly all of it is waiting.
    assert!(
        said.contains("of it the service's own CPU explains"),
        "{said}"
    );
    assert!(
        said.contains("queue behind a resource"),
        "both readings are named: {said}"
    );
    let waiting = target
        .get("/wait?us=2000&ms=20&offload=1")
        .does_not_block_its_worker()
        .check()?;
    assert_shape!("by_url_async", waiting);
    Ok(())
}

#[test]
fn by_url_a_fast_route_and_a_computing_one_are_inconclusive_and_say_why() -> Result {
    let served = served();
    let target = Target::url(&served.base)?;
    let fast = target
        .get("/cpu?us=50")
        .does_not_block_its_worker()
        .gate_mode(perfshape::claim::GateMode::Advisory)
        .check()?;
    let Some(verdict) = crate::common::decided(&fast) else {
        return Ok(());
    };
    assert_eq!(verdict, Verdict::Inconclusive, "{}", fast.report());
    // Too short against the load client; on a machine kept busy besides, a request alone
    // can take long enough to pass that test while the load waited for a CPU (1 in 10 busy
    // runs): the machine was the limit; or, its rounds run, the service's own CPU and the
    // machine's wait for one explain its hold (a whole suite with a core busy: 0.11 ms
    // computing and 0.27 ms waiting for a CPU of each 0.30 ms held). Inconclusive each way,
    // and the reason says which.
    let reason = &fast.report().reason();
    assert!(
        reason.contains("too short against the load client's own")
            || reason.contains("the machine's CPU was the limit")
            || reason.contains("the service's own CPU explains it"),
        "{reason}"
    );
    let computing = target
        .get("/cpu?us=20000&chunk_us=100")
        .concurrency(8)
        .does_not_block_its_worker()
        .gate_mode(perfshape::claim::GateMode::Advisory)
        // Inconclusive at once on a quiet machine; beside other work (CI runs the exact
        // tests' Monte Carlo on the other core) it measures again until the work frees
        // the machine or the budget ends, and says the machine was the limit: 13 s of a CI
        // run at the default 20 s, ≤ 3 s here.
        .budget(std::time::Duration::from_secs(3))
        .check()?;
    let Some(verdict) = crate::common::decided(&computing) else {
        return Ok(());
    };
    assert_eq!(verdict, Verdict::Inconclusive, "{}", computing.report());
    // Its own CPU explains the hold, and the report points at the claim that tells one
    // long poll from many short ones by URL; on a machine kept busy besides, the service
    // wanted a CPU it could not have, and the machine was the limit: inconclusive either way.
    let reason = &computing.report().reason();
    assert!(
        (reason.contains("the service's own CPU explains it")
            && reason.contains("keeps_answering_during()"))
            || reason.contains("the machine's CPU was the limit"),
        "{reason}"
    );
    Ok(())
}
