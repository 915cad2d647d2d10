//! A slow link between replicas (a delaying proxy in front of each internal endpoint):
//! forwards take longer but keep the rules, and a link that hangs fails closed.

use crate::support;

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use besluitbron_fakes::ObvSettings;
use support::redis::RedisServer;
use support::{fakes, structured, tool_error_text};

use super::{Replica, World, one_owner, search};

/// A TCP proxy on loopback in front of a replica's internal endpoint.
struct Proxy {
    addr: std::net::SocketAddr,
    target: Arc<OnceLock<std::net::SocketAddr>>,
    /// While set, nothing passes (the link hangs, the connections stay open).
    stalled: Arc<std::sync::atomic::AtomicBool>,
}

/// A proxy that delays every chunk by `delay` in both directions.
async fn slow_proxy(delay: Duration) -> Proxy {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let target: Arc<OnceLock<std::net::SocketAddr>> = Arc::new(OnceLock::new());
    let stalled = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (t, st) = (Arc::clone(&target), Arc::clone(&stalled));
    tokio::spawn(async move {
        loop {
            let Ok((inbound, _)) = listener.accept().await else {
                return;
            };
            let Some(to) = t.get().copied() else { continue };
            let st = Arc::clone(&st);
            tokio::spawn(async move {
                let Ok(outbound) = tokio::net::TcpStream::connect(to).await else {
                    return;
                };
                let (ri, wi) = inbound.into_split();
                let (ro, wo) = outbound.into_split();
                tokio::spawn(pipe(ri, wo, delay, Arc::clone(&st)));
                tokio::spawn(pipe(ro, wi, delay, st));
            });
        }
    });
    Proxy { addr, target, stalled }
}

async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: Duration,
    stalled: Arc<std::sync::atomic::AtomicBool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => {
                let _ = to.shutdown().await;
                return;
            }
            Ok(n) => n,
        };
        tokio::time::sleep(delay).await;
        while stalled.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_link_between_replicas_slows_forwards_but_keeps_the_rules() {
    let redis = RedisServer::start("own-slow");
    let f = fakes().await;
    f.obv.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 600);
    f.obv.set_latency(Duration::from_millis(200));
    let world = Arc::new(World::default());
    let mut rs = Vec::new();
    let mut proxies = Vec::new();
    for i in 0..3 {
        let proxy = slow_proxy(Duration::from_millis(150)).await;
        let r = Replica::start_with(&world, &f, &redis.url(), &format!("own-slow-{i}"), |c| {
            c.internal_url = format!("http://{}", proxy.addr);
        })
        .await;
        let _ = proxy.target.set(r.node().internal_addr());
        rs.push(r);
        proxies.push(proxy);
    }
    let owner = one_owner(&rs).await;
    let before = f.obv.requests();
    let mut calls = Vec::new();
    for i in 0..12 {
        // Half distinct, half the same question: coalescing holds over the slow link.
        let query = if i % 2 == 0 {
            format!("traag {i}")
        } else {
            "traag gedeeld".to_owned()
        };
        let url = rs[i % 3].url("/mcp/obv");
        calls.push(tokio::spawn(async move {
            let started = Instant::now();
            let r = search(url, i, query).await;
            (r, started.elapsed())
        }));
    }
    let mut forwarded = Vec::new();
    for (i, c) in calls.into_iter().enumerate() {
        let (r, took) = c.await.unwrap();
        structured(&r);
        if i % 3 != owner {
            forwarded.push(took);
        }
    }
    forwarded.sort();
    eprintln!("forwards over a 150 ms link: {forwarded:?}");
    assert!(
        forwarded.iter().all(|&d| d >= Duration::from_millis(300)),
        "a forward crosses the slow link both ways"
    );
    assert_eq!(f.obv.requests() - before, 7, "six distinct questions and one shared");
    // The link to the owner hangs: a forward that hears nothing (not even the owner's
    // heartbeat) is given up, and the call fails closed instead of hanging.
    proxies[owner].stalled.store(true, Ordering::SeqCst);
    let follower = (owner + 1) % 3;
    let asked = Instant::now();
    let r = search(rs[follower].url("/mcp/obv"), 50, "vastgelopen".to_owned()).await;
    let took = asked.elapsed();
    let text = tool_error_text(&r);
    assert!(
        text.contains("OpenBesluitvorming") && text.contains("retry in"),
        "{text}"
    );
    eprintln!("a hung link failed closed after {took:?}");
    assert!(took < Duration::from_secs(12), "no hang: {took:?}");
    proxies[owner].stalled.store(false, Ordering::SeqCst);
    structured(&search(rs[follower].url("/mcp/obv"), 51, "weer vrij".to_owned()).await);
    assert_eq!(f.obv.rate_limited(), 0);
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);
    for r in rs {
        r.stop().await;
    }
}
