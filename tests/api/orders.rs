use serde_json::{Value, json};

use crate::helpers::{TOKEN, TestApp, spawn_app};

/// `POST /orders` with the token and `order`: its answer.
async fn place(app: &TestApp, order: Value) -> reqwest::Response {
    app.client
        .post(format!("{}/orders", app.address))
        .bearer_auth(TOKEN)
        .json(&order)
        .send()
        .await
        .expect("an answer")
}

/// `GET path`, asserted 200, its JSON body.
async fn get_json(app: &TestApp, path: &str) -> Value {
    let response = app
        .client
        .get(format!("{}{path}", app.address))
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 200, "GET {path}");
    response.json().await.expect("a JSON body")
}

#[tokio::test]
async fn listing_orders_returns_the_three_in_store() {
    let app = spawn_app().await;
    let orders = get_json(&app, "/orders").await;
    assert_eq!(orders.as_array().expect("a list").len(), 3);
    assert_eq!(orders[0]["customer"], "ada");
}

#[tokio::test]
async fn an_order_is_found_by_its_id() {
    let app = spawn_app().await;
    let order = get_json(&app, "/orders/2").await;
    assert_eq!(order["customer"], "grace");
    assert_eq!(order["cents"], 4000);
}

#[tokio::test]
async fn an_unknown_order_is_not_found() {
    let app = spawn_app().await;
    let response = app
        .client
        .get(format!("{}/orders/99", app.address))
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn placing_an_order_needs_a_token() {
    let app = spawn_app().await;
    let response = app
        .client
        .post(format!("{}/orders", app.address))
        .json(&json!({ "customer": "ada", "cents": 1250 }))
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn an_order_without_a_customer_is_refused() {
    let app = spawn_app().await;
    let response = place(&app, json!({ "cents": 1250 })).await;
    assert_eq!(response.status(), 422);
}

#[tokio::test]
async fn placing_an_order_returns_it_with_an_id() {
    let app = spawn_app().await;
    let response = place(&app, json!({ "customer": "ada", "cents": 1250 })).await;
    assert_eq!(response.status(), 200);
    let order: Value = response.json().await.expect("the order");
    assert_eq!(order["id"], 4);
    assert_eq!(order["customer"], "ada");
}

#[tokio::test]
async fn a_placed_order_is_listed_and_found() {
    let app = spawn_app().await;
    for cents in [100, 200] {
        let response = place(&app, json!({ "customer": "linus", "cents": cents })).await;
        assert_eq!(response.status(), 200);
    }
    let orders = get_json(&app, "/orders").await;
    assert_eq!(orders.as_array().expect("a list").len(), 5);
    let order = get_json(&app, "/orders/5").await;
    assert_eq!(order["cents"], 200);
}
