//! A lease handover in the middle of a burst: two replicas' platform tasks in one
//! process (`driver::task::spawn_leased`, each with its own `LeaseGate`), fed by one
//! scripted lease engine and asked by the followers' routing, against the cluster
//! simulator (`sim/src/cluster/`) on the same script.
//!
//! Replica 0 takes the lease at once; replica 1's acquisitions are refused (the
//! engine answers the holder's remaining time) until the engine loses the key in the
//! middle of a burst. Replica 1 then takes it, replica 0's next renewal is refused:
//! its waiting calls are handed back and asked again, and replica 1 admits them once
//! its start wait is over, from an empty bucket and replica 0's usage checkpoint.
//! Every call lands at replica 1, which forwards it while it does not own.
//!
//! The lease engine, the lease tasks and the routing here follow the simulator's
//! rules step by step (the engine: `SET NX` with the holder's `PTTL` on a refusal,
//! renewals that write the owner's checkpoint; a follower: ask the owner the engine
//! names, again after 250 ms when nobody admits or the owner refused the call, at
//! once when the owner handed it back); the platform tasks are the server's own.
//! No call reaches a replica at the instant its lease or its path changes.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, CachePolicy, DataClass};
use besluitbron_core::cluster::{Lease, LeaseAnswer, LeaseCall, LeaseEvent, UsageCheckpoint};
use besluitbron_core::path::{Feedback, Outcome, PathConfig};
use besluitbron_core::{Instant, LimitConfig, SchedulerConfig, SessionKey, Units};
use besluitbron_fakes::serve_registry_on;
use besluitbron_server::call::classify;
use besluitbron_server::clock::Clock;
use besluitbron_server::driver::lease::lease_config;
use besluitbron_server::driver::{
    self, CallError, CallRequest, DriverOptions, LeaseGate, Ownership, Payload, PlatformHandle, SentCall, ServerBuffer,
    Upstream,
};
use besluitbron_server::metrics::Metrics;
use besluitbron_server::platforms::http::HttpConfig;
use besluitbron_server::platforms::obv::{ObvClient, SearchParams};
use besluitbron_sim::cluster::{
    Balancer, CLIENT_RETRY_MS, ClusterAdmission, ClusterFault, ClusterScenario, REROUTE_BACKOFF_MS, ScriptedCall,
    run_cluster,
};
use besluitbron_sim::engine::AdmissionLine;
use besluitbron_sim::scenario::LatencySpec;
use tokio_util::sync::CancellationToken;

const REPLICAS: usize = 2;
/// A TTL whose thirds and sixths are whole milliseconds (renewals every 2,100 ms,
/// refused acquisitions tried again after 1,050 ms), m = 1 s as the server takes it.
const TTL_MS: u64 = 6_300;
const ENGINE_MS: u64 = 1;
const KEY_LOSS_MS: u64 = 13_600;
const LATENCY_MS: u64 = 100;
const MS: u64 = 1_000_000;

/// Sessions a, b, c and d: a burst while replica 0 waits to start, more while it
/// admits (c asking one question a has queued: a join), and more after the key loss.
fn script() -> Vec<ScriptedCall> {
    let call = |at_ms: u64, session: &str, key: u64| ScriptedCall {
        at_ms,
        session: session.to_owned(),
        key,
        replica: Some(1),
        platform: None,
    };
    let mut calls: Vec<ScriptedCall> = (0..30).map(|i| call(1_017 + i, "a", i)).collect();
    calls.extend((0..10).map(|i| call(9_031 + i, "b", 100 + i)));
    calls.extend((0..5).map(|i| call(12_541 + i, "c", 200 + i)));
    calls.push(call(12_551, "c", 29));
    calls.extend((0..5).map(|i| call(16_007 + i, "d", 300 + i)));
    calls
}

fn scenario() -> ClusterScenario {
    ClusterScenario {
        description: "a lease handover in the middle of a burst (the differential test)".to_owned(),
        seed: 1,
        replicas: REPLICAS,
        drift_ppm: vec![0; REPLICAS],
        offset_ms: Vec::new(),
        ttl_ms: TTL_MS,
        margin_ms: lease_config(Duration::from_millis(TTL_MS)).margin.as_millis() as u64,
        balancer: Balancer::Hash,
        forward_ms: 0,
        engine_ms: ENGINE_MS,
        platform: besluitbron_server::platforms::obv::PLATFORM,
        shared_with: Vec::new(),
        service: None,
        rate_limit_headers: None,
        capacity: 60,
        window_s: 60,
        latency: LatencySpec::Fixed { ms: LATENCY_MS },
        sessions: 0,
        calls_per_session: 0,
        think_ms: 0,
        ramp_s: 0.0,
        key_pool: 1,
        give_up_s: 3_600,
        faults: vec![ClusterFault::KeyLoss {
            at_s: KEY_LOSS_MS as f64 / 1_000.0,
        }],
        send_delay_ms: 0,
        calls: script(),
    }
}

/// The lease engine: one key (its holder, token and expiry, in ns) and the usage
/// checkpoint the owner writes with each renewal.
#[derive(Default)]
struct Engine {
    key: Option<(usize, u64, u64)>,
    checkpoint: Option<UsageCheckpoint>,
}

impl Engine {
    /// The replica the engine names as the owner at `t`.
    fn holder(&self, t: u64) -> Option<usize> {
        self.key.filter(|k| k.2 > t).map(|k| k.0)
    }
}

/// What the followers' routing reads: the engine, and which replicas own (their
/// platform task was told to start and not yet to end).
struct World {
    engine: Mutex<Engine>,
    owning: Mutex<[bool; REPLICAS]>,
    handles: Vec<PlatformHandle>,
    origin: tokio::time::Instant,
}

impl World {
    fn now_ns(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).expect("a short test")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Wake(usize),
    Apply {
        replica: usize,
        id: u64,
        call: LeaseCall,
        token: u64,
    },
    Answer {
        replica: usize,
        id: u64,
        answer: LeaseAnswer,
    },
    KeyLoss,
}

/// The replicas' lease tasks and the engine, as the simulator runs them: events in
/// (instant, order of scheduling), each replica's lease told at each of its events,
/// its changes told to its platform task.
async fn leases(world: Arc<World>, gates: Vec<LeaseGate>) {
    let mut heap: BinaryHeap<Reverse<(u64, u64, Ev)>> = BinaryHeap::new();
    let mut seq = 0;
    let mut push = |heap: &mut BinaryHeap<Reverse<(u64, u64, Ev)>>, at: u64, ev: Ev| {
        seq += 1;
        heap.push(Reverse((at, seq, ev)));
    };
    let mut wakes: [Option<u64>; REPLICAS] = [Some(0); REPLICAS];
    for r in 0..REPLICAS {
        push(&mut heap, 0, Ev::Wake(r));
    }
    push(&mut heap, KEY_LOSS_MS * MS, Ev::KeyLoss);
    while let Some(Reverse((t, _, ev))) = heap.pop() {
        tokio::time::sleep_until(world.origin + Duration::from_nanos(t)).await;
        let now = Instant::from_nanos(t);
        {
            let mut engine = world.engine.lock().unwrap();
            if engine.key.is_some_and(|k| k.2 <= t) {
                engine.key = None;
            }
        }
        let stepped = match ev {
            Ev::Wake(r) => {
                if wakes[r].is_some_and(|w| w <= t) {
                    wakes[r] = None;
                    gates[r].lock().unwrap().handle_timeout(now);
                    Some(r)
                } else {
                    None
                }
            }
            Ev::Apply {
                replica,
                id,
                call,
                token,
            } => {
                let answer = engine_answers(&world, replica, call, token, t).await;
                push(&mut heap, t + ENGINE_MS * MS, Ev::Answer { replica, id, answer });
                None
            }
            Ev::Answer { replica, id, answer } => {
                gates[replica].lock().unwrap().on_answer(now, id, answer);
                Some(replica)
            }
            Ev::KeyLoss => {
                world.engine.lock().unwrap().key = None;
                None
            }
        };
        let Some(r) = stepped else { continue };
        // The lease task's step: requests to the engine, changes to the platform task.
        let (requests, events, next) = {
            let mut gate = gates[r].lock().unwrap();
            let requests: Vec<_> = std::iter::from_fn(|| gate.poll_request(now)).collect();
            let events: Vec<_> = std::iter::from_fn(|| gate.poll_event()).collect();
            (requests, events, gate.poll_timeout())
        };
        for request in requests {
            push(
                &mut heap,
                t + ENGINE_MS * MS,
                Ev::Apply {
                    replica: r,
                    id: request.id,
                    call: request.call,
                    token: request.token,
                },
            );
        }
        tell_the_platform_task(&world, r, events);
        if let Some(next) = next {
            let at = next.as_nanos().max(t + 1);
            if wakes[r].is_none_or(|p| p <= t || p > at) {
                wakes[r] = Some(at);
                push(&mut heap, at, Ev::Wake(r));
            }
        }
    }
}

/// The lease engine applies `call` of `replica` with `token` at true `t` (a renewal
/// by the owner also stores its usage checkpoint), and answers.
async fn engine_answers(world: &World, replica: usize, call: LeaseCall, token: u64, t: u64) -> LeaseAnswer {
    let ttl = TTL_MS * MS;
    let owning = world.owning.lock().unwrap()[replica];
    let checkpoint = if owning && call == LeaseCall::Renew {
        world.handles[replica].usage_checkpoint().await
    } else {
        None
    };
    let mut engine = world.engine.lock().unwrap();
    let mine = engine.key.is_some_and(|k| k.0 == replica && k.1 == token);
    let held_for = engine.key.map(|k| Duration::from_nanos(k.2.saturating_sub(t)));
    let granted = match call {
        LeaseCall::Acquire if engine.key.is_none() => {
            engine.key = Some((replica, token, t + ttl));
            true
        }
        LeaseCall::Renew if mine => {
            engine.key = Some((replica, token, t + ttl));
            if owning {
                engine.checkpoint = checkpoint;
            }
            true
        }
        LeaseCall::Release if mine => {
            engine.key = None;
            true
        }
        _ => false,
    };
    match (granted, call, held_for) {
        (true, ..) => LeaseAnswer::Granted,
        (false, LeaseCall::Acquire, Some(d)) => LeaseAnswer::HeldFor(d),
        (false, ..) => LeaseAnswer::Refused,
    }
}

/// The lease task tells the platform task of replica `r` what its lease's `events`
/// mean: ownership starts (with the engine's checkpoint) or ends.
fn tell_the_platform_task(world: &World, r: usize, events: Vec<LeaseEvent>) {
    for event in events {
        match event {
            LeaseEvent::StartAdmitting { epoch } => {
                let checkpoint = world.engine.lock().unwrap().checkpoint.clone();
                world.handles[r].ownership(Ownership::Start { epoch, checkpoint });
                world.owning.lock().unwrap()[r] = true;
            }
            LeaseEvent::Lost { .. } | LeaseEvent::HandingOver { .. } | LeaseEvent::Stopped => {
                world.handles[r].ownership(Ownership::End);
                world.owning.lock().unwrap()[r] = false;
            }
            LeaseEvent::Acquired { .. } => {}
        }
    }
}

/// The platform call: an OpenBesluitvorming search for `k<key>` by the server's
/// client, its `RateLimit-*` headers as feedback.
fn upstream(client: Arc<ObvClient>, key: u64) -> Upstream {
    Arc::new(move |_previous| {
        let client = Arc::clone(&client);
        Box::pin(async move {
            match client.search(&SearchParams::query(format!("k{key}"))).await {
                Ok((_page, rate)) => Outcome::Success {
                    payload: Payload::from_bytes(b"{\"answer\":1}".to_vec()),
                    feedback: Feedback {
                        remaining: rate.remaining,
                        reset: rate.reset,
                        ..Feedback::default()
                    },
                },
                Err(error) => classify(error),
            }
        })
    })
}

/// One scripted call, routed as the simulator's followers route it.
async fn ask(world: Arc<World>, client: Arc<ObvClient>, call: ScriptedCall) {
    tokio::time::sleep_until(world.origin + Duration::from_millis(call.at_ms)).await;
    let request = CallRequest {
        key: CacheKey::new(
            besluitbron_server::platforms::obv::PLATFORM,
            DataClass::Search,
            "search",
        )
        .param("q", format!("k{}", call.key)),
        session: SessionKey::client(&call.session),
        cost: Units::ONE,
        service: None,
    };
    let origin = call.replica.expect("the script names each call's replica");
    loop {
        let target = if world.owning.lock().unwrap()[origin] {
            Some(origin)
        } else {
            let t = world.now_ns();
            world.engine.lock().unwrap().holder(t).filter(|&h| h != origin)
        };
        let Some(h) = target else {
            tokio::time::sleep(Duration::from_millis(REROUTE_BACKOFF_MS)).await;
            continue;
        };
        let asked_at = tokio::time::Instant::now();
        let client = Arc::clone(&client);
        match world.handles[h]
            .call(request.clone(), || upstream(client, call.key), None)
            .await
        {
            Ok(_) => return,
            // Refused as it arrived: not (or not yet) admitting.
            Err(CallError::NotOwner(_)) if tokio::time::Instant::now() == asked_at => {
                tokio::time::sleep(Duration::from_millis(REROUTE_BACKOFF_MS)).await;
            }
            // Handed back at the end of the ownership: its own client asks again, a
            // follower at once.
            Err(CallError::NotOwner(_)) => {
                if h == origin {
                    tokio::time::sleep(Duration::from_millis(CLIENT_RETRY_MS)).await;
                }
            }
            Err(e) => panic!("k{}: {e}", call.key),
        }
    }
}

async fn server_log() -> Vec<ClusterAdmission> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the fakes");
    let fakes = serve_registry_on(listener).await.expect("serve the fakes");
    let obv = fakes
        .get(besluitbron_server::platforms::obv::PLATFORM)
        .expect("the obv fake")
        .clone();
    obv.set_latency(Duration::from_millis(LATENCY_MS));
    let base_url = fakes
        .base_urls()
        .into_iter()
        .find(|(p, _)| *p == besluitbron_server::platforms::obv::PLATFORM)
        .expect("obv's URL")
        .1;
    let client = Arc::new(ObvClient::new(&base_url, &HttpConfig::default()).expect("a client"));

    let clock = Clock::start();
    let origin = tokio::time::Instant::now();
    let lease = lease_config(Duration::from_millis(TTL_MS));
    let limit = LimitConfig::new(Units::whole(60), Duration::from_secs(60)).with_margin(lease.margin);
    let metrics = Arc::new(Metrics::new());
    let log: Arc<Mutex<Vec<ClusterAdmission>>> = Arc::default();
    let mut gates = Vec::new();
    let mut handles = Vec::new();
    for replica in 0..REPLICAS {
        let gate: LeaseGate = Arc::new(Mutex::new(Lease::new(lease, clock.now()).expect("valid")));
        let log = Arc::clone(&log);
        let options = DriverOptions {
            clock,
            metrics: Arc::clone(&metrics),
            attempt_timeout: Duration::from_secs(30),
            observer: Some(Arc::new(move |sent: &SentCall| {
                if let Some(a) = &sent.admission {
                    log.lock().unwrap().push(ClusterAdmission {
                        replica,
                        line: AdmissionLine {
                            at_ms: a.admitted_at.as_millis(),
                            platform: sent.platform,
                            service: besluitbron_server::platforms::obv::SERVICE,
                            session: a.session.to_string(),
                            call: sent.key.params().get("q").cloned().unwrap_or_default(),
                            rule: a.rule,
                        },
                    });
                }
            })),
            cancel: CancellationToken::new(),
            recorder: None,
        };
        let (handle, _task) = driver::task::spawn_one(
            PathConfig::single("obv", Some(SchedulerConfig::with_limit(limit))),
            ServerBuffer::new(
                besluitbron_server::platforms::obv::PLATFORM,
                None,
                CachePolicy::default().for_platform(besluitbron_server::platforms::obv::PLATFORM),
            ),
            options,
            Some(Arc::clone(&gate)),
        )
        .expect("valid");
        gates.push(gate);
        handles.push(handle);
    }
    let world = Arc::new(World {
        engine: Mutex::new(Engine::default()),
        owning: Mutex::new([false; REPLICAS]),
        handles,
        origin,
    });
    let leases = tokio::spawn(leases(Arc::clone(&world), gates));
    let calls: Vec<_> = script()
        .into_iter()
        .map(|call| tokio::spawn(ask(Arc::clone(&world), Arc::clone(&client), call)))
        .collect();
    for call in calls {
        call.await.expect("a scripted call");
    }
    leases.abort();
    let text = metrics.render();
    assert!(
        !text.contains("besluitbron_path_invariant_failures_total{"),
        "a path's invariants broke: {text}"
    );
    log.lock().unwrap().clone()
}

#[tokio::test(start_paused = true)]
async fn a_lease_handover_in_a_burst_is_admitted_alike_by_two_server_replicas_and_the_cluster_simulator() {
    let sim = run_cluster("handover", &scenario()).unwrap_or_else(|e| panic!("{e}"));
    // The script does what it says: a refused acquisition, an owner change.
    assert_eq!(sim.owners.len(), 2, "{:#?}", sim.owners);
    assert_eq!(
        (sim.owners[0].replica, sim.owners[1].replica),
        (0, 1),
        "{:#?}",
        sim.owners
    );
    assert!(sim.rerouted > 0, "calls waiting at replica 0 went to replica 1");
    let replicas: BTreeMap<usize, usize> = sim.admissions.iter().fold(BTreeMap::new(), |mut m, a| {
        *m.entry(a.replica).or_default() += 1;
        m
    });
    assert!(replicas.len() == 2, "both replicas admitted: {replicas:?}");
    let server = server_log().await;
    if server != sim.admissions {
        let first = server
            .iter()
            .zip(&sim.admissions)
            .position(|(a, b)| a != b)
            .unwrap_or(server.len().min(sim.admissions.len()));
        let show = |log: &[ClusterAdmission]| {
            log.iter()
                .skip(first.saturating_sub(3))
                .take(8)
                .map(|l| format!("  {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "the server's replicas and the cluster simulator admitted differently from line {first} ({} vs \
             {} admissions)\nserver:\n{}\nsimulator:\n{}",
            server.len(),
            sim.admissions.len(),
            show(&server),
            show(&sim.admissions)
        );
    }
}
