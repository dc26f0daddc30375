use serde_json::{Value, json};

use crate::helpers::{TOKEN, spawn_app};

#[tokio::test]
async fn the_report_totals_each_customer() {
    let app = spawn_app().await;
    let response = app
        .client
        .get(format!("{}/report", app.address))
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 200);
    let report: Value = response.json().await.expect("a report");
    assert_eq!(report["orders"], 3);
    assert_eq!(report["by_customer"]["ada"][0], 1970);
    assert_eq!(report["by_customer"]["grace"][0], 4000);
}

#[tokio::test]
async fn the_report_counts_a_new_order() {
    let app = spawn_app().await;
    let placed = app
        .client
        .post(format!("{}/orders", app.address))
        .bearer_auth(TOKEN)
        .json(&json!({ "customer": "grace", "cents": 500 }))
        .send()
        .await
        .expect("an answer");
    assert_eq!(placed.status(), 200);
    let report: Value = app
        .client
        .get(format!("{}/report", app.address))
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("a report");
    assert_eq!(report["orders"], 4);
    assert_eq!(report["by_customer"]["grace"][0], 4500);
}

#[tokio::test]
async fn the_report_has_each_customers_balance() {
    let app = spawn_app().await;
    let report: Value = app
        .client
        .get(format!("{}/report", app.address))
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("a report");
    assert!(report["by_customer"]["ada"][1].as_i64().expect("a balance") > 0);
}
