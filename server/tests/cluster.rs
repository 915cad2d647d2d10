//! Several replicas on one Redis (issue "Several replicas…"): each test starts its own
//! `redis-server` on a unix socket (support/redis.rs).

use crate::support;

use std::time::Duration;

use besluitbron_server::engine::Engine;
use support::eventually;
use support::redis::RedisServer;

#[tokio::test]
async fn a_replica_starts_while_redis_is_down_and_connects_when_it_answers() {
    let mut redis = RedisServer::start("late");
    redis.kill();
    let engine = Engine::new(&redis.url()).expect("a valid URL");
    assert!(engine.ping().await.is_err(), "nothing answers yet");
    redis.restart();
    assert!(
        eventually(Duration::from_secs(10), async || engine.ping().await.is_ok()).await,
        "the first use after the engine came up connects"
    );
}

#[tokio::test]
async fn the_engine_handle_fails_fast_while_redis_is_down_and_reconnects_after() {
    let mut redis = RedisServer::start("engine");
    let engine = Engine::new(&redis.url()).expect("a valid URL");
    engine.ping().await.expect("ping");
    redis.kill();
    let started = std::time::Instant::now();
    let err = engine.ping().await.expect_err("redis is down");
    assert!(err.to_string().contains("Redis"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a down engine fails within seconds"
    );
    redis.restart();
    assert!(
        eventually(Duration::from_secs(10), async || engine.ping().await.is_ok()).await,
        "the handle reconnects to the restarted engine"
    );
    redis.pause(Duration::from_millis(2_000));
    let started = std::time::Instant::now();
    assert!(engine.ping().await.is_err(), "a paused engine times out");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "within the response time-out"
    );
}
