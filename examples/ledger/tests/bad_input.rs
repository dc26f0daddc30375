//! What goes wrong before a load, named at the first call: a method the service does not
//! have, a message it cannot decode, one its handler refuses, a method path that is no
//! gRPC method, and a server that answers HTTP/1 only.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use ledger::core::Core;
use ledger::messages::Entry;
use ledger::{Build, router};
use perfshape::{PoolSettings, Result, Target};
use prost::Message;

fn served() -> Result<Target> {
    let core = Core::start(Duration::from_millis(1)).expect("the core starts");
    Target::serve(
        PoolSettings::workers(1)?,
        router(Build::Offloaded, core.addr()),
    )
}

/// The first call's error, as a claim would end with it.
fn first_call_fails(endpoint: &perfshape::Endpoint) -> String {
    match endpoint.preflight() {
        Ok(()) => panic!("{} answered OK", endpoint.name()),
        Err(error) => error.to_string(),
    }
}

#[test]
fn a_method_the_service_lacks_is_unimplemented() -> Result {
    let target = served()?;
    let said = first_call_fails(&target.grpc("/ledger.Ledger/Close", Vec::new()));
    assert!(said.contains("gRPC /ledger.Ledger/Close"), "{said}");
    assert!(said.contains("answered UNIMPLEMENTED"), "{said}");
    assert!(said.contains("in 1 of 1 requests"), "{said}");
    Ok(())
}

#[test]
fn a_message_the_service_cannot_decode_is_named_with_its_status() -> Result {
    let target = served()?;
    // A field 1 of length 200 in a message of four bytes: prost cannot decode it.
    let said =
        first_call_fails(&target.grpc("/ledger.Ledger/Record", vec![0x0a, 0xc8, 0x01, 0x61]));
    assert!(said.contains("answered INTERNAL"), "{said}");
    assert!(said.contains("decode"), "{said}");
    Ok(())
}

#[test]
fn a_message_the_handler_refuses_is_named_with_its_message() -> Result {
    let target = served()?;
    let empty = Entry {
        account: String::new(),
        cents: 5,
    };
    let said = first_call_fails(&target.grpc("/ledger.Ledger/Record", empty.encode_to_vec()));
    assert!(
        said.contains("answered INVALID_ARGUMENT (an entry names its account) in 1 of 1"),
        "{said}"
    );
    Ok(())
}

#[test]
fn a_path_that_is_no_grpc_method_is_refused_before_any_call() -> Result {
    let target = served()?;
    let said = first_call_fails(&target.grpc("ledger.Ledger/Record", Vec::new()));
    assert!(said.contains("gRPC method"), "{said}");
    assert!(said.contains("/package.Service/Method"), "{said}");
    Ok(())
}

/// A server that answers HTTP/1 only: to HTTP/2's preface it answers 400 and closes, as
/// an HTTP/1 server does.
#[test]
fn a_server_that_speaks_http1_only_is_named() -> Result {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = listener.local_addr().expect("its address");
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    let target = Target::url(&format!("http://{addr}"))?;
    let said = first_call_fails(&target.grpc("/ledger.Ledger/Health", Vec::new()));
    assert!(said.contains("HTTP/2"), "{said}");
    Ok(())
}
