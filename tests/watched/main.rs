//! The watch on functional tests as a team writes them: each test sends the requests a
//! functional test sends — with its own reqwest client, one to three a route, asserting on
//! the answers — while a [`Watch`](perfshape::Watch) records what the served workers did,
//! and ends with one line that decides on it. No load and no timing: this binary runs in
//! the ordinary test pool, in parallel with the rest of the suite, never retried.
//!
//! `services.rs` holds the project's correct services, every route of which must hold;
//! `twins.rs` their blocking twins, each of which must be broken, naming the route.

mod allowed;
#[path = "../common/mod.rs"]
mod common;
mod layered;
mod local;
mod located;
mod services;
mod twins;

use perfshape::{Checked, Result, Target, Verdict};

/// The verdict where every read the watch needs is made; in the portable build (what
/// macOS and Windows get) a watch that needs Linux's reads is inconclusive, naming them.
fn decided(checked: &Checked) -> Option<Verdict> {
    common::decided(checked)
}

/// The test's own HTTP client, as a functional test has one: no redirect followed, so a
/// test can assert on a 303.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a reqwest client")
}

/// `GET path` on `target`, its answer asserted a success (or a redirect).
async fn get(client: &reqwest::Client, target: &Target, path: &str) -> Result<reqwest::Response> {
    let response = client
        .get(target.url_of(path)?)
        .send()
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    assert!(
        response.status().is_success() || response.status().is_redirection(),
        "GET {path} answered {}",
        response.status()
    );
    Ok(response)
}

/// `POST /orders` on the orders example, as its functional test places one, asserted
/// answered.
async fn place_an_order(client: &reqwest::Client, target: &Target) -> Result {
    let created = client
        .post(target.url_of("/orders")?)
        .bearer_auth(common::orders::TOKEN)
        .json(&serde_json::json!({ "customer": "ada", "cents": 1250 }))
        .send()
        .await
        .expect("POST /orders");
    assert!(created.status().is_success(), "{}", created.status());
    Ok(())
}

/// The sign-in app verifying its hash as `verify` says, built on one served worker (its
/// session sweeper spawned there).
/// Creates a todo of each text on the todo list at `target`, as its functional test does.
async fn create_todos(client: &reqwest::Client, target: &Target, texts: &[&str]) -> Result {
    for text in texts {
        let created = client
            .post(target.url_of("/todos")?)
            .json(&serde_json::json!({ "text": text }))
            .send()
            .await
            .expect("POST /todos");
        assert_eq!(created.status(), 201);
    }
    Ok(())
}

fn sign_in_app(verify: common::signin::Verify) -> Result<Target> {
    Target::serve_with(perfshape::PoolSettings::workers(1)?, move || async move {
        Ok::<_, std::convert::Infallible>(common::signin::app(verify).await)
    })
}

/// `POST /login` as ada, asserted answered `303 See Other`: the answer.
async fn sign_in(client: &reqwest::Client, target: &Target) -> Result<reqwest::Response> {
    let signed_in = client
        .post(target.url_of("/login")?)
        .form(&[("username", "ada"), ("password", "lovelace")])
        .send()
        .await
        .expect("POST /login");
    assert_eq!(signed_in.status(), 303);
    Ok(signed_in)
}

/// The journal on one worker, writing into a scratch folder (removed when it drops).
fn journal() -> Result<(tempfile::TempDir, Target)> {
    let dir = tempfile::tempdir().expect("a scratch folder");
    let app = common::journal::app(dir.path().join("journal.log"), true);
    Ok((
        dir,
        Target::serve(perfshape::PoolSettings::workers(1)?, app)?,
    ))
}

/// `n` notes posted to `path` (`/note`, or `/note?async=1`), each asserted answered.
async fn notes(client: &reqwest::Client, target: &Target, path: &str, n: usize) -> Result {
    for _ in 0..n {
        let noted = client
            .post(target.url_of(path)?)
            .send()
            .await
            .expect("POST /note");
        assert!(noted.status().is_success());
    }
    Ok(())
}

/// The handlers of `handlers::app()` done right, one request each: every wait offloaded,
/// the computing in short polls.
const HANDLERS_DONE_RIGHT: [&str; 6] = [
    "/wait?us=2000&ms=5&offload=1",
    "/write?ms=2&offload=1",
    "/locked?ms=3&offload=1",
    "/hash?kib=20000&offload=1",
    "/cpu?us=3000&chunk_us=200",
    "/queued?ms=2",
];

/// Asserts that `checked` is broken and names the call `call` and the line marked for
/// `path` in `held.rs` — and, where given, the library function `via` the code there
/// called; in the portable build (what macOS and Windows get), that it says where in the
/// code is not read.
fn assert_names_the_line(checked: &Checked, path: &str, call: &str, via: Option<&str>) {
    let said = format!("{:#}", checked.report());
    let Some(verdict) = decided(checked) else {
        return;
    };
    assert_eq!(verdict, Verdict::Broken, "{said}");
    if cfg!(any(perfshape_portable, not(target_os = "linux"))) {
        assert!(said.contains("where in the code is not read"), "{said}");
        return;
    }
    let line = format!("({}:{})", common::held::FILE, common::held::line_of(path));
    assert!(said.contains(call), "the call `{call}`: {said}");
    assert!(said.contains(&line), "the line {line}: {said}");
    if let Some(via) = via {
        assert!(said.contains(&format!("`{via}")), "through `{via}`: {said}");
    }
}

/// Asserts that `checked` holds, where the watch's reads are made.
fn assert_holds(checked: &Checked) {
    if let Some(verdict) = decided(checked) {
        assert_eq!(verdict, Verdict::Holds, "{:#}", checked.report());
    }
}

/// Asserts that `checked` is broken and that its first line names `route`.
fn assert_names(checked: &Checked, route: &str) {
    if let Some(verdict) = decided(checked) {
        assert_eq!(verdict, Verdict::Broken, "{:#}", checked.report());
        let headline = checked.report().headline();
        assert!(headline.contains(route), "{headline}");
    }
}
