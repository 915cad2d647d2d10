//! Starting a budget group's task: its path over the group's buffers, and a handle per
//! platform that shares the task's channels and waiter numbers (unique on the path) but
//! numbers its own requests for the recording and knows its own first lane.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use besluitbron_core::path::{Lane, PathConfig, PlatformPath, Shell};
use besluitbron_core::{BudgetGroup, PlatformId, ServiceId};
use tokio::sync::mpsc;

use super::{
    Driver, DriverOptions, GroupBuffer, LeaseGate, MemoryLayer, PlatformHandle, REQUEST_CHANNEL_BOUND, ServerBuffer,
    record, unsent,
};

/// One platform of a budget group, as its task is started: its buffer and the service
/// its calls go to unless they name another.
pub struct Member {
    /// The platform's buffer.
    pub buffer: ServerBuffer,
    /// Its first service.
    pub first: ServiceId,
}

/// A started task: a handle per platform of the group, in the order given, and the task.
pub type Spawned = (Vec<PlatformHandle>, tokio::task::JoinHandle<()>);

/// Starts `group`'s task over its `members`' buffers with `config`; returns their handles
/// and the task.
pub fn spawn(
    group: &BudgetGroup,
    config: PathConfig,
    members: Vec<Member>,
    options: DriverOptions,
) -> Result<Spawned, besluitbron_core::path::PathConfigError> {
    spawn_leased(group, config, members, options, None)
}

/// As [`spawn`], for a replica of several: the task admits only while `lease` (the
/// group's) lets it (after it was told [`Ownership::Start`]), sends no admission the
/// lease no longer allows, and hands its waiting calls back at [`Ownership::End`].
/// `None`: one process, exactly as [`spawn`].
pub fn spawn_leased(
    group: &BudgetGroup,
    config: PathConfig,
    members: Vec<Member>,
    options: DriverOptions,
    lease: Option<LeaseGate>,
) -> Result<Spawned, besluitbron_core::path::PathConfigError> {
    let members = members
        .into_iter()
        .map(|m| {
            let lane = group.lane_of(m.first).and_then(|i| u8::try_from(i).ok()).unwrap_or(0);
            (m.buffer, Lane(lane))
        })
        .collect();
    start(
        group.services.iter().copied().collect(),
        config,
        members,
        options,
        lease,
    )
}

/// One platform's task alone, its path `config` as given (tests and benchmarks drive a
/// path directly): its calls go to lane 0 unless they name a lane's service, which such
/// a task does not know.
pub fn spawn_one(
    config: PathConfig,
    buffer: ServerBuffer,
    options: DriverOptions,
    lease: Option<LeaseGate>,
) -> Result<(PlatformHandle, tokio::task::JoinHandle<()>), besluitbron_core::path::PathConfigError> {
    let (mut handles, task) = start(Arc::from([]), config, vec![(buffer, Lane::MAIN)], options, lease)?;
    let handle = handles.pop().expect("one member, one handle");
    Ok((handle, task))
}

fn start(
    services: Arc<[ServiceId]>,
    config: PathConfig,
    members: Vec<(ServerBuffer, Lane)>,
    options: DriverOptions,
    lease: Option<LeaseGate>,
) -> Result<Spawned, besluitbron_core::path::PathConfigError> {
    let name = config.name;
    let platforms: Vec<PlatformId> = members.iter().map(|(b, _)| b.platform()).collect();
    let firsts: Vec<(PlatformId, Lane, MemoryLayer)> = members
        .iter()
        .map(|(b, lane)| (b.platform(), *lane, b.memory_layer()))
        .collect();
    let buffer = GroupBuffer::new(members.into_iter().map(|(b, _)| b).collect());
    let shell = Shell::new(PlatformPath::new(config, buffer)?, unsent);
    let (requests, requests_rx) = mpsc::channel(REQUEST_CHANNEL_BOUND);
    let (control, control_rx) = mpsc::unbounded_channel();
    let clock = options.clock;
    let recorder = options.recorder.clone();
    let driver = Driver {
        name,
        services: Arc::clone(&services),
        shell,
        control: control.clone(),
        notes: options.recorder.clone().map(|r| record::Notes::new(r, platforms)),
        options,
        lease,
    };
    let task = tokio::spawn(driver.run(requests_rx, control_rx));
    let next_waiter = Arc::new(AtomicU64::new(0));
    let handles = firsts
        .into_iter()
        .map(|(platform, main, memory)| PlatformHandle {
            platform,
            main,
            services: Arc::clone(&services),
            requests: requests.clone(),
            control: control.clone(),
            next_waiter: Arc::clone(&next_waiter),
            next_seq: Arc::new(AtomicU64::new(0)),
            clock,
            memory,
            recorder: recorder.clone(),
        })
        .collect();
    Ok((handles, task))
}
