//! TLS to PostgreSQL, honouring the URL's `sslmode` and `sslrootcert` as
//! libpq does, with rustls (pure Rust: a wheel links no system OpenSSL).
//!
//! - `disable`: plain TCP.
//! - `prefer` (the default): TLS when the server offers it, plain otherwise;
//!   the certificate is not checked (it only keeps passive listeners out).
//! - `require`: TLS or no connection; the certificate is not checked, unless
//!   `sslrootcert` is given, when it must chain to it (as libpq does).
//! - `verify-ca`: TLS, and the certificate must chain to `sslrootcert`.
//! - `verify-full`: that, and it must name the URL's host.
//!
//! The postgres client itself knows only disable/prefer/require, so the two
//! verifying modes and `sslrootcert` are taken out of the URL here before it
//! parses the rest.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use postgres::config::SslMode;
use postgres::{Client, Config, NoTls};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::identity::Expected;
use crate::error::{Error, Result};

/// What a URL's `sslmode` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// How a node reaches its database: the connection settings and the TLS
/// they ask for. Cloned for each kind of connection a node opens.
#[derive(Clone)]
pub struct Endpoint {
    pub config: Config,
    mode: Mode,
    tls: Option<MakeRustlsConnect>,
    /// The database every connection must reach (a node's), if any.
    expect: Option<Arc<Expected>>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the config: it may hold a password.
        f.debug_struct("Endpoint")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// The hint for a certificate the node would not accept.
const BAD_CERTIFICATE: &str = "connecting over TLS: the server's certificate was not \
    accepted. With sslmode=verify-ca or verify-full (or require with sslrootcert) it must \
    be signed by the CA in sslrootcert, and with verify-full name the URL's host; give the \
    right sslrootcert, or sslmode=require to encrypt without checking the certificate";
/// The hint for a server that insists on TLS, asked without.
const NEEDS_TLS: &str = "connecting without TLS (sslmode=disable), which this server \
    refuses; use sslmode=require, or verify-full with sslrootcert";

impl Endpoint {
    /// Parse `url` (a `postgresql://…` URL or libpq `key=value` string).
    pub fn parse(url: &str) -> Result<Self> {
        let (rest, mode, root) = take_tls_params(url)?;
        let mut config: Config = rest.parse().map_err(|e| {
            Error::invalid(
                "database_url",
                format!(
                    "Not a PostgreSQL connection URL ({e}); expected \
                     postgresql://user@host:port/database"
                ),
            )
        })?;
        config.ssl_mode(match mode {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        });
        let tls = match mode {
            Mode::Disable => None,
            _ => Some(MakeRustlsConnect::new(client_config(
                mode,
                root.as_deref(),
            )?)),
        };
        Ok(Endpoint {
            config,
            mode,
            tls,
            expect: None,
        })
    }

    /// Every connection opened from now on checks that it reached the
    /// database `expected` names (see [`super::identity`]), and fails with
    /// the mismatch when it did not.
    #[must_use]
    pub fn expecting(mut self, expected: Arc<Expected>) -> Self {
        self.expect = Some(expected);
        self
    }

    /// The `sslmode` in force.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Open a connection. A certificate the node refuses, or a server that
    /// wants TLS asked without, is a `STORAGE_ERROR` saying how to fix it.
    pub fn connect(&self) -> Result<Client> {
        let mut client = self.open()?;
        if let Some(expected) = &self.expect {
            expected.verify(&mut client)?;
        }
        Ok(client)
    }

    fn open(&self) -> Result<Client> {
        let connected = match &self.tls {
            Some(tls) => self.config.connect(tls.clone()),
            None => self.config.connect(NoTls),
        };
        connected.map_err(|source| {
            let during = if rejected_certificate(&source) {
                BAD_CERTIFICATE
            } else if self.mode == Mode::Disable && refused_without_tls(&source) {
                NEEDS_TLS
            } else {
                return Error::Postgres(source);
            };
            Error::Shipping { during, source }
        })
    }
}

/// `url` less `sslmode` and `sslrootcert`, with what they asked for.
fn take_tls_params(url: &str) -> Result<(String, Mode, Option<PathBuf>)> {
    let mut mode = None;
    let mut root = None;
    let mut take = |key: &str, value: String| -> Result<bool> {
        match key {
            "sslmode" => {
                mode = Some(parse_mode(&value)?);
                Ok(true)
            }
            "sslrootcert" => {
                root = Some(PathBuf::from(value));
                Ok(true)
            }
            _ => Ok(false),
        }
    };
    let rest = if url.starts_with("postgresql://") || url.starts_with("postgres://") {
        match url.split_once('?') {
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&').filter(|p| !p.is_empty()) {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    if !take(key, percent_decode(value))? {
                        kept.push(pair);
                    }
                }
                if kept.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
            None => url.to_owned(),
        }
    } else {
        // key=value words; these two never need quoting in practice.
        let mut kept = Vec::new();
        for word in url.split_whitespace() {
            let (key, value) = word.split_once('=').unwrap_or((word, ""));
            if !take(key.trim(), value.trim().trim_matches('\'').to_owned())? {
                kept.push(word);
            }
        }
        kept.join(" ")
    };
    let mode = mode.unwrap_or(Mode::Prefer);
    if matches!(mode, Mode::VerifyCa | Mode::VerifyFull) && root.is_none() {
        return Err(Error::invalid(
            "database_url",
            "sslmode=verify-ca and verify-full check the server's certificate against \
             sslrootcert: add sslrootcert=/path/to/ca.pem (the CA that signed it) to the URL.",
        ));
    }
    Ok((rest, mode, root))
}

fn parse_mode(value: &str) -> Result<Mode> {
    Ok(match value {
        "disable" => Mode::Disable,
        "prefer" | "allow" => Mode::Prefer,
        "require" => Mode::Require,
        "verify-ca" => Mode::VerifyCa,
        "verify-full" => Mode::VerifyFull,
        other => {
            return Err(Error::invalid(
                "database_url",
                format!(
                    "sslmode={other} is not known; use disable, prefer, require, verify-ca \
                     or verify-full."
                ),
            ));
        }
    })
}

/// `%XX` escapes decoded (a URL's `sslrootcert` path may carry them).
fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The rustls configuration for `mode`, checking certificates against the
/// CAs in `root` where the mode asks for it.
fn client_config(mode: Mode, root: Option<&Path>) -> Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let check_chain = match mode {
        Mode::VerifyCa | Mode::VerifyFull => true,
        Mode::Require => root.is_some(),
        Mode::Disable | Mode::Prefer => false,
    };
    let verifier: Arc<dyn ServerCertVerifier> = match root {
        Some(root) if check_chain => {
            let roots = Arc::new(load_roots(root)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .map_err(|e| {
                    Error::invalid(
                        "database_url",
                        format!("sslrootcert {}: {e}", root.display()),
                    )
                })?;
            if mode == Mode::VerifyFull {
                webpki
            } else {
                Arc::new(ChainOnly(webpki))
            }
        }
        _ => Arc::new(EncryptOnly(provider.signature_verification_algorithms)),
    };
    Ok(ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::invalid("database_url", format!("TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// The certificates of the PEM file `path`.
fn load_roots(path: &Path) -> Result<RootCertStore> {
    let bad = |why: String| {
        Error::invalid(
            "database_url",
            format!(
                "sslrootcert {}: {why}; give a PEM file of the CA certificate(s) that signed \
                 the server's certificate.",
                path.display()
            ),
        )
    };
    let mut roots = RootCertStore::empty();
    let certificates = CertificateDer::pem_file_iter(path).map_err(|e| bad(e.to_string()))?;
    for certificate in certificates {
        let certificate = certificate.map_err(|e| bad(e.to_string()))?;
        roots.add(certificate).map_err(|e| bad(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    Ok(roots)
}

/// Whether `error` is a certificate the node refused during the handshake.
fn rejected_certificate(error: &postgres::Error) -> bool {
    let mut cause = std::error::Error::source(error);
    while let Some(e) = cause {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return matches!(
                tls,
                rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented
            );
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && let Some(tls) = io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>())
        {
            return matches!(tls, rustls::Error::InvalidCertificate(_));
        }
        cause = e.source();
    }
    false
}

/// Whether the server refused a connection for want of TLS (its pg_hba.conf
/// has only `hostssl` lines for this client).
fn refused_without_tls(error: &postgres::Error) -> bool {
    error.as_db_error().is_some_and(|db| {
        *db.code() == postgres::error::SqlState::INVALID_AUTHORIZATION_SPECIFICATION
            && db.message().contains("no encryption")
    })
}

/// Encrypts without checking who the server is (`prefer`, `require`): the
/// handshake's signatures are still verified, the certificate's issuer and
/// names are not.
#[derive(Debug)]
struct EncryptOnly(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// `verify-ca`: the certificate must chain to the given roots; the names in
/// it are not compared with the host.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_params_leave_the_url_and_verifying_modes_need_a_root() {
        let (rest, mode, root) = take_tls_params(
            "postgresql://u@h:5/db?sslmode=verify-full&application_name=x&sslrootcert=%2Ftmp%2Fca.pem",
        )
        .unwrap();
        assert_eq!(rest, "postgresql://u@h:5/db?application_name=x");
        assert_eq!(mode, Mode::VerifyFull);
        assert_eq!(root, Some(PathBuf::from("/tmp/ca.pem")));
        let (rest, mode, _) = take_tls_params("host=h sslmode=require dbname=d").unwrap();
        assert_eq!((rest.as_str(), mode), ("host=h dbname=d", Mode::Require));
        assert_eq!(
            take_tls_params("postgresql://h/db").unwrap().1,
            Mode::Prefer
        );
        for bad in [
            "postgresql://h/db?sslmode=verify-ca",
            "postgresql://h/db?sslmode=sometimes",
        ] {
            let err = take_tls_params(bad).unwrap_err();
            assert_eq!(err.code(), "INVALID_PARAMETER", "{bad}");
        }
    }
}
