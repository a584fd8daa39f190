//! One worker's side of a network target: its operator, every call retried only as `--retries`
//! says (and counted), and block I/O with requests in flight up to the queue depth.

use bytes::Bytes;
use futures_util::stream::{FuturesUnordered, StreamExt};
use futures_util::FutureExt;
use opendal::{Buffer, Operator};

use crate::clock::Instant;
use crate::storage::{
    BlockIo, BlockOp, BlockOpts, Check, Client, Completion, FileOpts, FileRead, IoEngine, OpResult, Source,
};
use crate::{AlignedBuf, OpError};

use super::{count_entries, op_error, stream_error};

/// One worker's operator.
pub struct DalClient {
    pub(super) op: Operator,
    /// The prefix that holds the run directory, for `../NAME/...` (a kept dataset), where the
    /// run reaches there.
    pub(super) beside: Option<Operator>,
    pub(super) part_size: Option<usize>,
    pub(super) part_concurrency: usize,
    pub(super) retries: u32,
    pub(super) retried: u64,
}

/// Retry temporary failures up to `$self.retries` times, counting every retry.
///
/// Not OpenDAL's `RetryLayer`, though its interceptor could count: the layer also retries
/// inside `Reader`/`Writer` streams, and its documentation warns that it can panic when such a
/// future is dropped before it resolves, which dfsbench does whenever a phase ends (or an
/// operation is abandoned) with requests in flight. Here a retry is the whole operation sent
/// again, at once (no backoff sleeping inside the measured latency), which is what `--retries`
/// promises and counts.
macro_rules! retry {
    ($self:ident, $op:expr) => {{
        let mut attempt = 0;
        loop {
            match $op.await {
                Ok(v) => break Ok(v),
                Err(e) if e.is_temporary() && attempt < $self.retries => {
                    attempt += 1;
                    $self.retried += 1;
                }
                Err(e) => break Err(op_error(e)),
            }
        }
    }};
}

impl DalClient {
    /// The operator that serves `path` and the path in it: the run's, or for `../NAME/...`
    /// the one of the prefix that holds the run directory; nothing further up.
    fn at<'p>(&self, path: &'p str) -> OpResult<(Operator, &'p str)> {
        let (op, rest) = match path.strip_prefix("../") {
            Some(rest) => (self.beside.as_ref(), rest),
            None => (Some(&self.op), path),
        };
        match op {
            Some(op) if !rest.split('/').any(|c| c == "..") => Ok((op.clone(), rest)),
            _ => Err(OpError::new(
                "EPERM",
                format!("{path}: outside the run directory, and not a dataset this run keeps beside it"),
            )),
        }
    }
}

// Every call is boxed: a worker's future then holds a pointer, not the largest of OpenDAL's
// request futures (hundreds of KiB per worker at -j 256), and the heap holds only the future of
// the request in flight.
impl Client for DalClient {
    type Block = DalBlock;

    async fn mkdir(&mut self, path: &str) -> OpResult<()> {
        Box::pin(async move {
            let (op, path) = self.at(path)?;
            let dir = format!("{path}/");
            retry!(self, op.create_dir(&dir))
        })
        .await
    }

    async fn rmdir(&mut self, path: &str) -> OpResult<()> {
        Box::pin(async move {
            let (op, path) = self.at(path)?;
            let dir = format!("{path}/");
            retry!(self, op.delete(&dir))
        })
        .await
    }

    async fn create(&mut self, path: &str) -> OpResult<()> {
        Box::pin(async move {
            let (op, path) = self.at(path)?;
            retry!(self, op.write(path, Buffer::new())).map(|_| ())
        })
        .await
    }

    async fn stat(&mut self, path: &str) -> OpResult<u64> {
        Box::pin(async move {
            let (op, path) = self.at(path)?;
            retry!(self, op.stat(path)).map(|m| m.content_length())
        })
        .await
    }

    async fn open_close(&mut self, path: &str) -> OpResult<()> {
        Box::pin(async move {
            let (op, path) = self.at(path)?;
            retry!(self, op.read(path)).map(|_| ())
        })
        .await
    }

    async fn rename(&mut self, from: &str, to: &str) -> OpResult<()> {
        Box::pin(async move {
            if from.starts_with("../") != to.starts_with("../") {
                return Err(OpError::new(
                    "EPERM",
                    format!("{from} -> {to}: a rename stays inside the run directory or beside it"),
                ));
            }
            let ((op, from), (_, to)) = (self.at(from)?, self.at(to)?);
            retry!(self, op.rename(from, to))
        })
        .await
    }

    async fn list(&mut self, dir: &str) -> OpResult<u64> {
        Box::pin(async move {
            let (op, dir) = self.at(dir)?;
            let d = format!("{dir}/");
            retry!(self, count_entries(&op, &d))
        })
        .await
    }

    async fn delete(&mut self, path: &str) -> OpResult<()> {
        Box::pin(async move {
            let (op, path) = self.at(path)?;
            retry!(self, op.delete(path))
        })
        .await
    }

    async fn write_file(&mut self, path: &str, size: u64, _opts: FileOpts, mut src: Source<'_>) -> OpResult<()> {
        Box::pin(async move {
            // The content, chunk by chunk: slices of the job's shared data (no copy), or each
            // filled chunk copied into the request body.
            let step = src.chunk_len();
            let mut chunks = Vec::with_capacity(size.div_ceil(step as u64) as usize);
            let mut off = 0u64;
            while off < size {
                let len = (size - off).min(step as u64) as usize;
                chunks.push(match &mut src {
                    Source::Repeat(d) => d.bytes().slice(..len),
                    filled => Bytes::copy_from_slice(filled.chunk(off, len)),
                });
                off += len as u64;
            }
            let body = Buffer::from(chunks);
            let (op, path) = self.at(path)?;
            match self.part_size {
                // One request: a PUT on object stores, one upload on file services.
                None => retry!(self, op.write(path, body.clone())).map(|_| ()),
                // A multipart upload of part_size parts, part_concurrency in flight.
                Some(part) => {
                    let mut attempt = 0;
                    loop {
                        let upload = async {
                            let mut w = op
                                .writer_with(path)
                                .chunk(part)
                                .concurrent(self.part_concurrency)
                                .await?;
                            w.write(body.clone()).await?;
                            w.close().await.map(|_| ())
                        };
                        match upload.await {
                            Ok(()) => return Ok(()),
                            Err(e) if e.is_temporary() && attempt < self.retries => {
                                attempt += 1;
                                self.retried += 1;
                            }
                            Err(e) => return Err(op_error(e)),
                        }
                    }
                }
            }
        })
        .await
    }

    async fn read_file(
        &mut self,
        path: &str,
        _opts: FileOpts,
        _buf: &mut AlignedBuf,
        check: Option<Check<'_>>,
    ) -> OpResult<FileRead> {
        Box::pin(async move {
            let mut check = check;
            let (op, path) = self.at(path)?;
            let reader = retry!(self, op.reader(path))?;
            let mut stream = reader.into_bytes_stream(..).await.map_err(op_error)?;
            let mut read = FileRead::default();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(stream_error)?;
                if read.first_byte.is_none() {
                    read.first_byte = Some(Instant::now());
                }
                if let Some(c) = check.as_deref_mut() {
                    c(&chunk, read.bytes);
                }
                read.bytes += chunk.len() as u64;
            }
            Ok(read)
        })
        .await
    }

    async fn open_block(&mut self, path: &str, opts: BlockOpts) -> OpResult<DalBlock> {
        Box::pin(async move {
            let (op, path) = self.at(path)?;
            let reader = retry!(self, op.reader(path))?;
            let depth = opts.queue_depth.max(1);
            Ok(DalBlock {
                reader,
                bufs: (0..depth).map(|_| AlignedBuf::new(opts.block_size)).collect(),
                inflight: FuturesUnordered::new(),
            })
        })
        .await
    }

    fn take_retries(&mut self) -> u64 {
        std::mem::take(&mut self.retried)
    }
}

type Pending = std::pin::Pin<Box<dyn std::future::Future<Output = (usize, opendal::Result<Buffer>)>>>;

/// Ranged reads of one object with `depth` requests in flight.
pub struct DalBlock {
    reader: opendal::Reader,
    bufs: Vec<AlignedBuf>,
    inflight: FuturesUnordered<Pending>,
}

impl DalBlock {
    fn finish(&mut self, slot: usize, result: opendal::Result<Buffer>, out: &mut Vec<Completion>) {
        let result = result.map_err(op_error).map(|data| {
            let n = data.len().min(self.bufs[slot].len());
            let mut at = 0;
            for chunk in data {
                let take = chunk.len().min(n - at);
                self.bufs[slot][at..at + take].copy_from_slice(&chunk[..take]);
                at += take;
            }
            n
        });
        out.push(Completion { slot, result });
    }
}

impl BlockIo for DalBlock {
    fn depth(&self) -> usize {
        self.bufs.len()
    }

    fn engine(&self) -> IoEngine {
        IoEngine::Requests
    }

    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        &mut self.bufs[slot]
    }

    fn submit(&mut self, slot: usize, op: BlockOp, offset: u64, len: usize) -> OpResult<()> {
        if op == BlockOp::Write {
            return Err(OpError::unsupported("writing at an offset of an object"));
        }
        let reader = self.reader.clone();
        self.inflight.push(Box::pin(async move {
            (slot, reader.read(offset..offset + len as u64).await)
        }));
        Ok(())
    }

    async fn complete(&mut self, min: usize, out: &mut Vec<Completion>) -> OpResult<()> {
        let mut got = 0;
        while got < min {
            match self.inflight.next().await {
                Some((slot, r)) => {
                    self.finish(slot, r, out);
                    got += 1;
                }
                None => return Ok(()),
            }
        }
        while let Some(Some((slot, r))) = self.inflight.next().now_or_never() {
            self.finish(slot, r, out);
        }
        Ok(())
    }

    async fn complete_within(&mut self, timeout: std::time::Duration, out: &mut Vec<Completion>) -> OpResult<()> {
        // FuturesUnordered::next is cancel-safe: a request the timeout leaves stays in flight.
        if let Ok(Some((slot, r))) = tokio::time::timeout(timeout, self.inflight.next()).await {
            self.finish(slot, r, out);
        }
        while let Some(Some((slot, r))) = self.inflight.next().now_or_never() {
            self.finish(slot, r, out);
        }
        Ok(())
    }

    async fn sync(&mut self, _data_only: bool) -> OpResult<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operator(root: &str) -> Operator {
        let s3 = opendal::services::S3::default()
            .bucket("b")
            .endpoint("http://127.0.0.1:9")
            .region("us-east-1")
            .root(root);
        Operator::new(s3).unwrap().finish()
    }

    fn client(beside: bool) -> DalClient {
        DalClient {
            op: operator("/p/dfsbench-run/"),
            beside: beside.then(|| operator("/p/")),
            part_size: None,
            part_concurrency: 1,
            retries: 0,
            retried: 0,
        }
    }

    /// `../NAME/...` is served by the prefix that holds the run, only where the run keeps a
    /// dataset there, and nothing above that prefix is reached.
    #[test]
    fn paths_beside_the_run_go_to_the_prefix_and_no_further() {
        let c = client(true);
        let (op, path) = c.at("j0/f1").unwrap();
        assert_eq!((op.info().root(), path), ("/p/dfsbench-run/".to_string(), "j0/f1"));
        let (op, path) = c.at("../dfsbench-dataset-x/f3").unwrap();
        assert_eq!((op.info().root(), path), ("/p/".to_string(), "dfsbench-dataset-x/f3"));
        for outside in ["../../x", "../a/../../x", "j0/../../x"] {
            assert_eq!(c.at(outside).unwrap_err().kind, "EPERM", "{outside}");
        }
        assert_eq!(client(false).at("../dfsbench-dataset-x/f3").unwrap_err().kind, "EPERM");
    }
}
