//! A sign-in form as most web services have one: `GET /login` serves the form, `POST
//! /login` takes it (a form body), looks the user up, verifies the password against its
//! stored hash, opens a session and answers `303 See Other` to `/` with the session's
//! cookie — or back to `/login?failed` — and `GET /` greets a signed-in user. A background
//! task sweeps expired sessions, on the same workers, as session stores do.
//!
//! [`Verify::Inline`] verifies the hash in the handler's poll, the mistake a widely used
//! authentication crate's example shipped with (fixed by moving it to `spawn_blocking`,
//! [`Verify::Offloaded`]): the worker computes [`VERIFY`] without giving itself back, and
//! the route's answer is a redirect — which a client that follows it would judge in the
//! name of the page it points to.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Form, State};
use axum::http::header::{COOKIE, LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use tokio::sync::RwLock;

use super::handlers::compute;

/// CPU time one password verification takes: a memory-hard hash's cost (argon2id's was
/// 27–30 ms on this machine's worker), in one poll where it is inline.
pub const VERIFY: Duration = Duration::from_millis(30);

/// How long a session lives before the sweeper removes it.
const SESSION_LIFE: Duration = Duration::from_secs(60);

/// How often the background task sweeps expired sessions.
const SWEEP_EVERY: Duration = Duration::from_millis(50);

/// Where the password hash is verified.
#[derive(Clone, Copy, Debug)]
pub enum Verify {
    /// In the handler's poll, on the async worker: the mistake.
    Inline,
    /// On tokio's blocking pool (`spawn_blocking`), awaited: the fix.
    Offloaded,
}

/// The form's fields.
#[derive(Debug, Deserialize)]
pub struct Credentials {
    username: String,
    password: String,
}

/// The users (a name to its salt and stored hash) and the open sessions (an id to its user
/// and its expiry).
#[derive(Clone)]
struct Store {
    verify: Verify,
    /// CPU time one verification takes.
    cost: Duration,
    users: Arc<RwLock<HashMap<String, (u64, u64)>>>,
    sessions: Arc<RwLock<HashMap<u64, (String, Instant)>>>,
    next: Arc<AtomicU64>,
}

/// The app with one user, `ada` whose password is `lovelace`, and its session sweeper
/// started on the runtime that builds it: build it inside `Target::serve_with` so that the
/// sweeper runs on the served workers, as it does in production.
pub async fn app(verify: Verify) -> Router {
    app_costing(verify, VERIFY).await
}

/// The same app whose verification takes `cost` of CPU: a hash whose parameters are set
/// high, or one built without optimisations (argon2id's takes ≈400 ms so).
pub async fn app_costing(verify: Verify, cost: Duration) -> Router {
    let store = Store {
        verify,
        cost,
        users: Arc::default(),
        sessions: Arc::default(),
        next: Arc::new(AtomicU64::new(1)),
    };
    store
        .users
        .write()
        .await
        .insert("ada".into(), (7, digest(7, "lovelace")));
    let sweeping = store.sessions.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(SWEEP_EVERY);
        loop {
            every.tick().await;
            let now = Instant::now();
            sweeping.write().await.retain(|_, (_, until)| *until > now);
        }
    });
    Router::new()
        .route("/login", get(form).post(sign_in))
        .route("/", get(home))
        .with_state(store)
}

/// The password's digest with `salt` (a cheap stand-in for the stored hash's value).
fn digest(salt: u64, password: &str) -> u64 {
    password
        .bytes()
        .fold(salt ^ 0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// Verifies `password` against the stored `(salt, hash)`: `cost` of CPU, as a memory-hard
/// hash takes.
fn verify_password(password: &str, (salt, hash): (u64, u64), cost: Duration) -> bool {
    compute(cost);
    digest(salt, password) == hash
}

async fn form() -> Html<&'static str> {
    Html(
        "<form method=\"post\" action=\"/login\">\
         <input name=\"username\"><input name=\"password\" type=\"password\">\
         <button>Sign in</button></form>",
    )
}

fn see_other(location: &str) -> Response {
    (StatusCode::SEE_OTHER, [(LOCATION, location.to_string())]).into_response()
}

async fn sign_in(State(store): State<Store>, Form(credentials): Form<Credentials>) -> Response {
    let Some(stored) = store.users.read().await.get(&credentials.username).copied() else {
        return see_other("/login?failed");
    };
    let (password, cost) = (credentials.password, store.cost);
    let verified = match store.verify {
        Verify::Inline => verify_password(&password, stored, cost),
        Verify::Offloaded => {
            tokio::task::spawn_blocking(move || verify_password(&password, stored, cost))
                .await
                .expect("the verification does not panic")
        }
    };
    if !verified {
        return see_other("/login?failed");
    }
    let id = store.next.fetch_add(1, Ordering::Relaxed);
    store
        .sessions
        .write()
        .await
        .insert(id, (credentials.username, Instant::now() + SESSION_LIFE));
    let mut response = see_other("/");
    let cookie = format!("session={id}; HttpOnly; Path=/");
    response
        .headers_mut()
        .insert(SET_COOKIE, cookie.parse().expect("a valid header value"));
    response
}

async fn home(State(store): State<Store>, headers: HeaderMap) -> Response {
    let session = headers
        .get(COOKIE)
        .and_then(|c| c.to_str().ok())
        .and_then(|c| {
            c.split(';')
                .find_map(|kv| kv.trim().strip_prefix("session="))
        })
        .and_then(|id| id.parse::<u64>().ok());
    let user = match session {
        Some(id) => store
            .sessions
            .read()
            .await
            .get(&id)
            .map(|(user, _)| user.clone()),
        None => None,
    };
    match user {
        Some(user) => format!("hello, {user}").into_response(),
        None => see_other("/login"),
    }
}
