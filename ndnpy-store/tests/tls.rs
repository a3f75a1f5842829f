//! HTTPS clients are built with ring's crypto provider (the `tls` feature
//! of Cargo.toml, without aws-lc): a store built from a URL gets a client
//! that connects (here: to a port where nothing listens, an ordinary I/O
//! error), never reqwest's panic for want of a provider.
#![cfg(all(feature = "aws", feature = "http"))]

use ndnpy_store::{Location, RemoteNpy, UrlOptions};
use object_store::RetryConfig;
use std::time::Duration;

/// Options that make a failed connection fail at once.
fn quick(mut options: Vec<(String, String)>) -> UrlOptions {
    options.push(("timeout".into(), "2s".into()));
    options.push(("connect_timeout".into(), "2s".into()));
    UrlOptions {
        options,
        retry: Some(RetryConfig {
            max_retries: 0,
            retry_timeout: Duration::from_secs(2),
            ..RetryConfig::default()
        }),
    }
}

#[tokio::test]
async fn https_urls_get_a_client_that_connects() {
    let s3 = quick(vec![
        ("aws_endpoint".into(), "https://127.0.0.1:9".into()),
        ("aws_region".into(), "us-east-1".into()),
        ("aws_access_key_id".into(), "k".into()),
        ("aws_secret_access_key".into(), "s".into()),
    ]);
    for (url, options) in [
        ("https://127.0.0.1:9/a.npy", quick(Vec::new())),
        ("s3://bucket/a.npy", s3),
    ] {
        let at = Location::parse_with(url, &options).expect("a store is built");
        let err = RemoteNpy::open(&at)
            .await
            .expect_err("nothing listens on port 9");
        let text = err.to_string();
        assert!(!text.contains("crypto provider"), "{url}: {text}");
    }
}
