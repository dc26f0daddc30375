//! A todo list kept in memory: the kind of CRUD service a team writes first, and the model
//! of an ordinary axum service (the shape of axum's own `todos` example, written here).
//! Every handler computes for tens of microseconds under a std `RwLock` and never waits:
//! none of them blocks its worker.
//!
//! `app()` is the service as it is; `app_with(Flaw::SyncWrite(d))` is the same service whose
//! create handler also makes a synchronous call of `d` on its worker (a sync database
//! driver, a `std::fs` write): the bug perfshape must catch.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, patch};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// One todo.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Todo {
    /// Its id, given by the service.
    pub id: u64,
    /// What to do.
    pub text: String,
    /// Whether it is done.
    pub completed: bool,
}

/// What `POST /todos` takes.
#[derive(Debug, Deserialize)]
pub struct CreateTodo {
    /// What to do.
    pub text: String,
}

/// What `PATCH /todos/{id}` takes.
#[derive(Debug, Deserialize)]
pub struct UpdateTodo {
    /// New text, if any.
    pub text: Option<String>,
    /// Done or not, if given.
    pub completed: Option<bool>,
}

/// `GET /todos?offset=&limit=`.
#[derive(Debug, Default, Deserialize)]
pub struct Pagination {
    /// How many to skip.
    pub offset: Option<usize>,
    /// How many to return at most.
    pub limit: Option<usize>,
}

/// A mistake to build into the service, for the claims to catch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flaw {
    /// None: the service as written.
    None,
    /// `POST /todos` also makes a synchronous call of this long on its worker
    /// (`std::thread::sleep`: the shape of a sync driver's write).
    SyncWrite(Duration),
}

#[derive(Clone)]
struct Db {
    todos: Arc<RwLock<HashMap<u64, Todo>>>,
    next: Arc<AtomicU64>,
    flaw: Flaw,
}

/// The service as written, with `seed` todos already in it.
pub fn app() -> Router {
    app_with(Flaw::None)
}

/// The service with `flaw` built in, with 100 todos already in it.
pub fn app_with(flaw: Flaw) -> Router {
    let db = Db {
        todos: Arc::default(),
        next: Arc::new(AtomicU64::new(1)),
        flaw,
    };
    for i in 0..100 {
        let id = db.next.fetch_add(1, Ordering::Relaxed);
        let todo = Todo {
            id,
            text: format!("todo number {i}"),
            completed: i % 3 == 0,
        };
        db.todos.write().unwrap().insert(id, todo);
    }
    Router::new()
        .route("/todos", get(todos_index).post(todos_create))
        .route("/todos/{id}", patch(todos_update).delete(todos_delete))
        .layer(TraceLayer::new_for_http())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_secs(10),
        ))
        .with_state(db)
}

async fn todos_index(pagination: Query<Pagination>, State(db): State<Db>) -> impl IntoResponse {
    let todos = db.todos.read().unwrap();
    let mut page: Vec<Todo> = todos.values().cloned().collect();
    page.sort_by_key(|t| t.id);
    let page: Vec<Todo> = page
        .into_iter()
        .skip(pagination.offset.unwrap_or(0))
        .take(pagination.limit.unwrap_or(usize::MAX))
        .collect();
    Json(page)
}

async fn todos_create(State(db): State<Db>, Json(input): Json<CreateTodo>) -> impl IntoResponse {
    let todo = Todo {
        id: db.next.fetch_add(1, Ordering::Relaxed),
        text: input.text,
        completed: false,
    };
    if let Flaw::SyncWrite(took) = db.flaw {
        // The bug: a synchronous write, on the async worker.
        std::thread::sleep(took);
    }
    db.todos.write().unwrap().insert(todo.id, todo.clone());
    (StatusCode::CREATED, Json(todo))
}

async fn todos_update(
    Path(id): Path<u64>,
    State(db): State<Db>,
    Json(input): Json<UpdateTodo>,
) -> Result<impl IntoResponse, StatusCode> {
    let mut todos = db.todos.write().unwrap();
    let todo = todos.get_mut(&id).ok_or(StatusCode::NOT_FOUND)?;
    if let Some(text) = input.text {
        todo.text = text;
    }
    if let Some(completed) = input.completed {
        todo.completed = completed;
    }
    Ok(Json(todo.clone()))
}

async fn todos_delete(Path(id): Path<u64>, State(db): State<Db>) -> impl IntoResponse {
    if db.todos.write().unwrap().remove(&id).is_some() {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::NOT_FOUND
    }
}
