//! Wiring several replicas into a server being built (`App::build_with`): the leases
//! (one per budget group — the platforms sharing upstream services — every group,
//! limited or not: ownership is also what makes one upstream call per question across
//! replicas, and one owner per service spends its budget in one place), their tasks,
//! and the internal endpoint.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use besluitbron_core::cluster::{Lease, LeaseConfig};
use besluitbron_core::{BudgetGroup, PlatformId};
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
    /// Per budget group served: its name, its platforms served, its lease.
    budgets: Vec<(&'static str, Vec<PlatformId>, LeaseGate)>,
    listener: tokio::net::TcpListener,
    bound: std::net::SocketAddr,
    url: String,
}

/// Makes the leases and binds the internal endpoint (port 0: the bound port is
/// advertised when `InternalUrl` is empty).
pub fn prepare(
    c: &ClusterConfig,
    groups: &[BudgetGroup],
    platforms: &[PlatformId],
    clock: Clock,
) -> anyhow::Result<Prepared> {
    let lease = lease_config(c.lease_ttl());
    let mut budgets = Vec::new();
    for group in groups {
        let served: Vec<PlatformId> = group
            .platforms
            .iter()
            .copied()
            .filter(|p| platforms.contains(p))
            .collect();
        if served.is_empty() {
            continue;
        }
        let l = Lease::new(lease, clock.now()).map_err(|e| anyhow::anyhow!("BesluitBron.Cluster.LeaseTtlMs: {e}"))?;
        budgets.push((group.name(), served, Arc::new(Mutex::new(l))));
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
        budgets,
        listener,
        bound,
        url,
    })
}

impl Prepared {
    /// The lease of the budget group named `budget`, for its task.
    pub fn gate(&self, budget: &str) -> Option<LeaseGate> {
        self.budgets
            .iter()
            .find(|(name, ..)| *name == budget)
            .map(|(.., g)| Arc::clone(g))
    }

    /// Each platform's lease gate (its group's) and budget name.
    fn per_platform(&self) -> (BTreeMap<PlatformId, LeaseGate>, BTreeMap<PlatformId, &'static str>) {
        let (mut gates, mut names) = (BTreeMap::new(), BTreeMap::new());
        for (name, platforms, gate) in &self.budgets {
            for &p in platforms {
                gates.insert(p, Arc::clone(gate));
                names.insert(p, *name);
            }
        }
        (gates, names)
    }

    /// This replica's node.
    pub fn node(
        &self,
        engine: Engine,
        c: &ClusterConfig,
        cache_version: String,
        metrics: Arc<Metrics>,
    ) -> anyhow::Result<Arc<Node>> {
        let (gates, budgets) = self.per_platform();
        let node = Node::new(
            engine,
            self.clock,
            self.url.clone(),
            self.bound,
            c.secret.clone(),
            self.lease,
            cache_version,
            metrics,
            gates,
            budgets,
        )
        .map_err(|e| anyhow::anyhow!("BesluitBron.Cluster: the client for forwards: {e}"))?;
        Ok(Arc::new(node))
    }

    /// Routes `calls` whose platform another replica owns through `node`, and starts
    /// the lease tasks and the internal endpoint (which serves forwards with `calls`).
    pub fn start(self, calls: &Arc<Calls>, node: &Arc<Node>, cancel: CancellationToken) {
        // Set once, here, before anything is served.
        let _ = calls.set_route(Arc::clone(node) as Arc<dyn crate::mcp::route::Route>);
        for (budget, platforms, gate) in &self.budgets {
            let Some(handle) = platforms.first().and_then(|p| calls.ctx.platforms.get(*p)).cloned() else {
                continue;
            };
            let forget = Arc::clone(node);
            let task = LeaseTask {
                budget,
                platforms: platforms.clone(),
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
