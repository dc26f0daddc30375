//! seed 001 — HttpClient lifecycle × sync/async — as claims (`src/catalog/seed001.rs`).

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;
use perfshape_experiments::catalog::seed001;

#[test]
fn sync_over_sync_is_slowest_and_async_over_async_fastest_with_a_shared_client() -> Result {
    assert_shapes!(seed001::ordering_with_a_shared_client(Claimed)?);
    Ok(())
}

#[test]
fn sync_over_sync_is_slowest_and_async_over_async_fastest_with_a_client_per_request() -> Result {
    assert_shapes!(seed001::ordering_with_a_client_per_request(Claimed)?);
    Ok(())
}

#[test]
fn sync_over_sync_is_slowest_and_async_over_async_fastest_with_pooled_clients() -> Result {
    assert_shapes!(seed001::ordering_with_pooled_clients(Claimed)?);
    Ok(())
}

#[test]
fn a_cap_of_two_connections_serialises_an_async_client() -> Result {
    assert_shapes!(seed001::a_cap_of_two_connections(Claimed)?);
    Ok(())
}
