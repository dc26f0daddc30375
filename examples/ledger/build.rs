//! The ledger's gRPC service, generated from its description in Rust: tonic-build's manual
//! builder writes the server trait and its routing as `tonic-build` does from a `.proto`,
//! with no protoc to install.

fn main() {
    let method = |name: &str, route: &str, input: &str, output: &str| {
        tonic_build::manual::Method::builder()
            .name(name)
            .route_name(route)
            .input_type(input)
            .output_type(output)
            .codec_path("tonic_prost::ProstCodec")
            .build()
    };
    let ledger = tonic_build::manual::Service::builder()
        .name("Ledger")
        .package("ledger")
        .method(method(
            "record",
            "Record",
            "crate::messages::Entry",
            "crate::messages::Recorded",
        ))
        .method(method(
            "health",
            "Health",
            "crate::messages::Ping",
            "crate::messages::Pong",
        ))
        .build();
    tonic_build::manual::Builder::new()
        .build_client(false)
        .compile(&[ledger]);
}
