//! The ledger's functional test, watched: record entries and ask for its health over
//! gRPC, as a team's test calls its tonic service on a served target, asserting each
//! answer. The store client on the blocking pool holds; on the worker it is broken,
//! naming the call.

use std::time::Duration;

use ledger::core::Core;
use ledger::messages::{Entry, Ping, Pong, Recorded};
use ledger::{Build, router};
use perfshape::{Checked, PoolSettings, Result, Target, Verdict};
use prost::Message;

/// The core's round trip: a store a little way off.
const ROUND_TRIP: Duration = Duration::from_millis(2);

/// One unary gRPC call to `method` with `message`, its answer's message decoded: a frame of
/// one uncompressed message, over HTTP/2 without a prior upgrade, as tonic's clients send.
async fn call<M: Message + Default>(
    client: &reqwest::Client,
    target: &Target,
    method: &str,
    message: &impl Message,
) -> Result<(Option<String>, Option<M>)> {
    let encoded = message.encode_to_vec();
    let mut body = vec![0u8];
    body.extend_from_slice(&(encoded.len() as u32).to_be_bytes());
    body.extend_from_slice(&encoded);
    let answered = client
        .post(target.url_of(method)?)
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"));
    assert_eq!(answered.status(), 200, "{method}");
    // A call that fails answers its status at once, in the headers; one that succeeds
    // carries its message, and its status in the trailers.
    let status = answered
        .headers()
        .get("grpc-status")
        .map(|s| s.to_str().unwrap_or_default().to_string());
    let bytes = answered.bytes().await.expect("the answer's body");
    let message = (bytes.len() >= 5).then(|| M::decode(&bytes[5..]).expect("a message"));
    Ok((status, message))
}

/// The functional test on `build`: three entries recorded, one refused, the health asked.
async fn functional_test(build: Build) -> Result<Checked> {
    let core = Core::start(ROUND_TRIP).expect("the core starts");
    let target = Target::serve(PoolSettings::workers(1)?, router(build, core.addr()))?;
    let watch = target.watch()?;
    let client = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .expect("a client");
    let mut last = 0;
    for cents in [1250, 300, 75] {
        let entry = Entry {
            account: "acct-1".into(),
            cents,
        };
        let (_, recorded) =
            call::<Recorded>(&client, &target, "/ledger.Ledger/Record", &entry).await?;
        let seq = recorded.expect("a recorded entry").seq;
        assert!(seq > last, "sequence {seq} after {last}");
        last = seq;
    }
    let nameless = Entry {
        account: String::new(),
        cents: 1,
    };
    let (status, _) =
        call::<Recorded>(&client, &target, "/ledger.Ledger/Record", &nameless).await?;
    assert_eq!(status.as_deref(), Some("3"), "INVALID_ARGUMENT");
    let (_, pong) = call::<Pong>(&client, &target, "/ledger.Ledger/Health", &Ping {}).await?;
    assert!(pong.expect("a pong").serving);
    watch.nothing_blocked()
}

/// `checked` came out `expected`; off Linux (and in CI's portable build) a watch is
/// inconclusive, naming the read it lacks.
fn came_out(checked: &Checked, expected: Verdict) {
    let report = checked.report();
    if report.unread().is_some() {
        assert_eq!(checked.verdict(), Verdict::Inconclusive, "{report}");
        return;
    }
    assert_eq!(checked.verdict(), expected, "{report:#}");
}

#[tokio::test]
async fn the_store_client_on_the_blocking_pool_holds() -> Result {
    came_out(&functional_test(Build::Offloaded).await?, Verdict::Holds);
    Ok(())
}

#[tokio::test]
async fn the_store_client_on_the_worker_is_named() -> Result {
    let checked = functional_test(Build::SyncOnWorker).await?;
    came_out(&checked, Verdict::Broken);
    if checked.verdict() == Verdict::Broken {
        let headline = checked.report().headline();
        assert!(
            headline.contains("POST /ledger.Ledger/Record"),
            "{headline}"
        );
    }
    Ok(())
}
