//! The reqwest client a load sends with, and the URLs it accepts.

use super::Limits;
use super::tls;
use crate::error::{Error, Result};

/// Refuses, before anything is sent, a URL that is not an absolute `http(s)://` URL: a
/// typo must fail at once, not as N failed requests.
pub fn check_url(url: &str) -> Result<reqwest::Url> {
    let unreachable = |reason: String| Error::Unreachable {
        url: url.to_string(),
        reason,
    };
    let parsed = reqwest::Url::parse(url).map_err(|e| unreachable(format!("not a URL ({e})")))?;
    match parsed.scheme() {
        "https" if !cfg!(feature = "https") => Err(unreachable(
            "https needs perfshape's `https` feature (rustls); this build has plain HTTP only"
                .into(),
        )),
        "http" | "https" if parsed.host().is_some() => Ok(parsed),
        "http" | "https" => Err(unreachable("the URL has no host".into())),
        other => Err(unreachable(format!(
            "scheme {other:?} is not http or https"
        ))),
    }
}

/// A reqwest client bound by `limits`, keeping at most `idle_per_host` idle connections;
/// proxies are ignored because every target of a shape measurement is reached directly.
/// Redirects are not followed: a claim judges the request it names, and a `303 See Other`
/// is that request's answer ([`Outcome::of_status`](crate::record::Outcome::of_status)) —
/// followed, the polls read would be the page it points to, not the route's.
/// With `http2`, it speaks HTTP/2 only, with prior knowledge (cleartext, as gRPC services
/// are served in tests): one connection carries every request in flight to a host.
pub(super) fn build_client(
    limits: Limits,
    idle_per_host: usize,
    http2: bool,
) -> Result<reqwest::Client> {
    tls::ensure_crypto_provider();
    let builder = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(limits.request_timeout)
        .pool_max_idle_per_host(idle_per_host);
    #[cfg(feature = "grpc")]
    let builder = if http2 {
        builder.http2_prior_knowledge()
    } else {
        builder
    };
    #[cfg(not(feature = "grpc"))]
    let _ = http2;
    builder.build().map_err(Error::Client)
}
