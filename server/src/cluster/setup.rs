//! Wiring several replicas into a server being built (`App::build_with`): the leases
//! (one per platform, every platform, limited or not: ownership is also what makes one
//! upstream call per question across replicas), their tasks, and the internal endpoint.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use besluitbron_core::PlatformId;
use besluitbron_core::cluster::{Lease, LeaseConfig};
use tokio_util::sync::CancellationToken;

use super::forward::{Node, serve_internal};
use crate::clock::Clock;
use crate::config::ClusterConfig;
use crate::driver::LeaseGate;
use crate::driver::lease::{LeaseTask, lease_config};
use crate::engine::Engine;
use crate::mcp::Calls;
use crate::metrics::Metrics;

/// What is made before the platforms' tasks: the leases and the internal listener.
pub struct Prepared {
    clock: Clock,
    lease: LeaseConfig,
    gates: BTreeMap<PlatformId, LeaseGate>,
    listener: tokio::net::TcpListener,
    bound: std::net::SocketAddr,
    url: String,
}

/// Makes the leases and binds the internal endpoint (port 0: the bound port is
/// advertised when `InternalUrl` is empty).
pub fn prepare(c: &ClusterConfig, platforms: &[PlatformId], clock: Clock) -> anyhow::Result<Prepared> {
    let lease = lease_config(c.lease_ttl());
    let mut gates = BTreeMap::new();
    for &platform in platforms {
        let l = Lease::new(lease, clock.now()).map_err(|e| anyhow::anyhow!("BesluitBron.Cluster.LeaseTtlMs: {e}"))?;
        gates.insert(platform, Arc::new(Mutex::new(l)));
    }
    let listener = crate::listen::bind(c.internal_listen)
        .map_err(|e| anyhow::anyhow!("BesluitBron.Cluster.InternalListen {}: {e}", c.internal_listen))?;
    let bound = listener.local_addr()?;
    let url = if c.internal_url.is_empty() {
        format!("http://{bound}")
    } else {
        c.internal_url()
    };
    Ok(Prepared {
        clock,
        lease,
        gates,
        listener,
        bound,
        url,
    })
}

impl Prepared {
    /// `platform`'s lease, for its task.
    pub fn gate(&self, platform: PlatformId) -> Option<LeaseGate> {
        self.gates.get(&platform).cloned()
    }

    /// This replica's node.
    pub fn node(
        &self,
        engine: Engine,
        c: &ClusterConfig,
        cache_version: String,
        metrics: Arc<Metrics>,
    ) -> anyhow::Result<Arc<Node>> {
        let node = Node::new(
            engine,
            self.clock,
            self.url.clone(),
            self.bound,
            c.secret.clone(),
            self.lease,
            cache_version,
            metrics,
            self.gates.clone(),
        )
        .map_err(|e| anyhow::anyhow!("BesluitBron.Cluster: the client for forwards: {e}"))?;
        Ok(Arc::new(node))
    }

    /// Routes `calls` whose platform another replica owns through `node`, and starts
    /// the lease tasks and the internal endpoint (which serves forwards with `calls`).
    pub fn start(self, calls: &Arc<Calls>, node: &Arc<Node>, cancel: CancellationToken) {
        // Set once, here, before anything is served.
        let _ = calls.set_route(Arc::clone(node) as Arc<dyn crate::mcp::route::Route>);
        for (platform, gate) in &self.gates {
            let Some(handle) = calls.ctx.platforms.get(*platform).cloned() else {
                continue;
            };
            let forget = Arc::clone(node);
            let task = LeaseTask {
                platform: *platform,
                engine: node.engine().clone(),
                gate: Arc::clone(gate),
                handle,
                clock: self.clock,
                metrics: Arc::clone(&calls.ctx.metrics),
                replica: node.replica().to_owned(),
                url: node.url().to_owned(),
                shutdown: node.shutdown_token(),
                on_change: Arc::new(move |p| forget.forget_owner(p)),
            };
            node.add_task(tokio::spawn(task.run()));
        }
        let _endpoint = serve_internal(self.listener, Arc::clone(calls), Arc::clone(node), cancel);
    }
}
