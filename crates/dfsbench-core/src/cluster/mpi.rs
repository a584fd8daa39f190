//! The ranks of an MPI job (mpirun, srun) through rsmpi. Only the main thread calls MPI.
//! Receives poll with MPI_Improbe so that every wait has a deadline: a hung rank ends the run
//! with a message instead of blocking it forever.

use std::time::{Duration, Instant};

use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{Destination, Equivalence, MatchedReceiveVec, Source};

use super::procs::MAX_FRAME;
use super::{RecvError, Transport};

pub struct Mpi {
    // Dropping the universe calls MPI_Finalize: it lives as long as the group.
    _universe: Universe,
    world: SimpleCommunicator,
}

impl Mpi {
    /// Initialise MPI; `expected` is the size the launcher announced.
    pub fn init(expected: usize) -> Result<Mpi, String> {
        let (universe, _) =
            mpi::initialize_with_threading(mpi::Threading::Funneled).ok_or("MPI was initialised twice")?;
        let world = universe.world();
        let size = world.size() as usize;
        if size != expected {
            return Err(format!(
                "the launcher started {expected} tasks but MPI sees {size}: with srun, pass --mpi=pmix (or pmi2)"
            ));
        }
        Ok(Mpi {
            _universe: universe,
            world,
        })
    }
}

impl Transport for Mpi {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }
    fn size(&self) -> usize {
        self.world.size() as usize
    }
    fn kind(&self) -> &'static str {
        "mpi"
    }

    fn send(&mut self, to: usize, tag: u8, data: &[u8]) -> Result<(), String> {
        self.world
            .process_at_rank(to as i32)
            .send_with_tag(data, i32::from(tag));
        Ok(())
    }

    fn recv(&mut self, from: usize, tag: u8, deadline: Instant) -> Result<Vec<u8>, RecvError> {
        let peer = self.world.process_at_rank(from as i32);
        let mut pause = Duration::from_micros(20);
        loop {
            if let Some(probed) = peer.immediate_matched_probe_with_tag(i32::from(tag)) {
                // The size before the bytes, as the --procs sockets check a frame's header:
                // a rank of another program never makes this one allocate what it claims.
                let len = u64::try_from(probed.1.count(u8::equivalent_datatype())).unwrap_or(u64::MAX);
                if len > MAX_FRAME {
                    // Never received: rsmpi asserts on dropping a matched message, and the
                    // run ends with this error anyway.
                    std::mem::forget(probed.0);
                    return Err(RecvError::Garbled(format!(
                        "sent a message of {len} bytes, more than the {} MiB limit",
                        MAX_FRAME >> 20
                    )));
                }
                let (data, _) = probed.matched_receive_vec::<u8>();
                return Ok(data);
            }
            if Instant::now() >= deadline {
                return Err(RecvError::Timeout);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }

    fn abort(&mut self, code: i32) -> ! {
        self.world.abort(code)
    }
}
