use crate::helpers::spawn_app;

#[tokio::test]
async fn health_answers_ok() {
    let app = spawn_app().await;
    let response = app
        .client
        .get(format!("{}/health", app.address))
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.expect("a body"), "ok");
}
