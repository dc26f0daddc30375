//! The service's behaviour, the same in every build, and its database's errors: a file
//! that cannot be created, a file that is not a database, a schema that fails — each
//! named with the path and the statement before the service starts.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt as _;
use inventory::{Build, Database, Error, Store, TOKEN, app};
use serde_json::{Value, json};
use tower::ServiceExt as _;

/// Sends one request to `router` in process; its status and JSON body.
async fn send(
    router: &axum::Router,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(uri);
    if method == "POST" {
        request = request
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {TOKEN}"));
    }
    let body = body.map_or_else(Body::empty, |b| Body::from(b.to_string()));
    let response = router
        .clone()
        .oneshot(request.body(body).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into()));
    (status, value)
}

#[tokio::test]
async fn every_build_answers_alike() {
    for build in Build::ALL {
        let folder = tempfile::tempdir().unwrap();
        let database = Database::create(folder.path().join("inventory.db")).unwrap();
        let router = app(Store::open(build, &database).unwrap());
        let new = json!({ "sku": "new-1", "name": "a new thing" });
        assert_eq!(
            send(&router, "POST", "/items", Some(new.clone())).await.0,
            StatusCode::CREATED,
            "{build}"
        );
        assert_eq!(
            send(&router, "POST", "/items", Some(new)).await.0,
            StatusCode::CONFLICT,
            "{build}"
        );
        let (status, item) = send(&router, "GET", "/items/sku-0042", None).await;
        assert_eq!(
            (status, item),
            (
                StatusCode::OK,
                json!({ "sku": "sku-0042", "name": "item 42", "qty": 100 })
            ),
            "{build}"
        );
        let movement = json!({ "delta": -30, "note": "an order" });
        let (status, stock) =
            send(&router, "POST", "/items/sku-0042/movements", Some(movement)).await;
        assert_eq!(
            (status, stock),
            (StatusCode::CREATED, json!({ "sku": "sku-0042", "qty": 70 })),
            "{build}"
        );
        let too_many = json!({ "delta": -71, "note": "an order too large" });
        assert_eq!(
            send(&router, "POST", "/items/sku-0042/movements", Some(too_many))
                .await
                .0,
            StatusCode::CONFLICT,
            "{build}"
        );
        let unknown = json!({ "delta": 1, "note": "?" });
        assert_eq!(
            send(&router, "POST", "/items/nope/movements", Some(unknown))
                .await
                .0,
            StatusCode::NOT_FOUND,
            "{build}"
        );
        // A delivery with an unknown line records nothing.
        let delivery = json!({ "note": "delivery", "lines": [{ "sku": "sku-0042", "delta": 5 }, { "sku": "nope", "delta": 1 }] });
        assert_eq!(
            send(&router, "POST", "/deliveries", Some(delivery)).await.0,
            StatusCode::NOT_FOUND,
            "{build}"
        );
        assert_eq!(
            send(&router, "GET", "/items/sku-0042", None).await.1["qty"],
            70,
            "{build}"
        );
        let delivery = json!({ "note": "delivery", "lines": [{ "sku": "sku-0042", "delta": 5 }, { "sku": "sku-0043", "delta": 1 }] });
        assert_eq!(
            send(&router, "POST", "/deliveries", Some(delivery)).await,
            (StatusCode::CREATED, json!({ "lines": 2 })),
            "{build}"
        );
        let (status, page) = send(&router, "GET", "/items?after=sku-0100&limit=3", None).await;
        let skus: Vec<&str> = page
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["sku"].as_str().unwrap())
            .collect();
        assert_eq!(
            (status, skus),
            (StatusCode::OK, vec!["sku-0101", "sku-0102", "sku-0103"]),
            "{build}"
        );
        assert_eq!(
            send(&router, "GET", "/items?limit=0", None).await.0,
            StatusCode::BAD_REQUEST,
            "{build}"
        );
        assert_eq!(
            send(&router, "GET", "/items/none", None).await.0,
            StatusCode::NOT_FOUND,
            "{build}"
        );
        // A write without the token.
        let anonymous = Request::post("/items")
            .header("content-type", "application/json")
            .body(Body::from(r#"{"sku":"x","name":"y"}"#))
            .unwrap();
        assert_eq!(
            router.clone().oneshot(anonymous).await.unwrap().status(),
            StatusCode::UNAUTHORIZED,
            "{build}"
        );
    }
}

#[test]
fn a_database_in_a_missing_folder_is_named() {
    let path = std::path::Path::new("/nonexistent/perfshape/inventory.db");
    let error = Database::create(path).unwrap_err();
    assert!(matches!(error, Error::Open { .. }), "{error}");
    assert!(error.to_string().contains("cannot open the database /nonexistent/perfshape/inventory.db: unable to open database file"), "{error}");
}

#[test]
fn a_file_that_is_not_a_database_is_named_with_the_statement() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("notes.txt");
    std::fs::write(&path, "these are not the pages of a database, but a file long enough to have a header's worth of text in it: more than a hundred bytes").unwrap();
    let error = Database::create(&path).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("the database {} refused `PRAGMA", path.display())),
        "{error}"
    );
    assert!(error.ends_with("file is not a database"), "{error}");
}

#[test]
fn a_schema_that_fails_names_its_statement() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("other.db");
    // Another application's database, whose `movements` has no `sku`.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE movements (id INTEGER PRIMARY KEY, amount INTEGER)")
        .unwrap();
    let error = Database::create(&path).unwrap_err().to_string();
    let expected = format!(
        "the database {} refused `CREATE INDEX IF NOT EXISTS movements_by_sku ON movements (sku)`: no such column: sku",
        path.display()
    );
    assert!(error.starts_with(&expected), "{error}");
}

#[test]
fn a_build_is_named_on_the_command_line() {
    assert_eq!("sqlx".parse::<Build>(), Ok(Build::Sqlx));
    assert_eq!(
        "diesel".parse::<Build>(),
        Err(
            "unknown build \"diesel\": expected one of on-worker, shared-connection, pool, sqlx"
                .to_string()
        )
    );
}
