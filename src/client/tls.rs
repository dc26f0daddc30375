//! The TLS provider, installed once per process before any client is built (with the
//! `https` feature).
//!
//! reqwest 0.13 defaults to aws-lc-rs, whose C build takes minutes on a 2-core machine;
//! perfshape builds reqwest without a provider and installs ring here instead, so a user
//! can still point the client strategies at an `https://` service.

/// Installs ring as the process-wide rustls provider unless one is already installed
/// (by the embedding application, say).
#[cfg(feature = "https")]
pub(crate) fn ensure_crypto_provider() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Losing a race to another installer is fine: any provider will do.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
    });
}

/// Without the `https` feature there is no TLS to set up.
#[cfg(not(feature = "https"))]
pub(crate) fn ensure_crypto_provider() {}
