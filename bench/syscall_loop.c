/*
 * syscall_loop: the bare metadata loop that dfsbench's meta workload runs, as a reference.
 *
 *   syscall_loop DIR FILES WORKERS [threads|procs]
 *
 * Makes DIR/j0-meta/w<k> for each worker k (unmeasured, as dfsbench does before its phases),
 * then runs the phases create, stat, open, rename, delete. In each phase every worker handles
 * its own FILES files with exactly the calls of dfsbench's posix backend, relative to a file
 * descriptor of DIR and with the same relative paths ("j0-meta/w3/w3.f17", renamed to
 * "j0-meta/w3/w3.f17.r"):
 *
 *   create  openat(dirfd, path, O_CREAT|O_EXCL|O_WRONLY|O_CLOEXEC, 0644) + close
 *   stat    fstatat(dirfd, path, &st, 0)
 *   open    openat(dirfd, path, O_RDONLY|O_CLOEXEC) + close
 *   rename  renameat(dirfd, path, dirfd, path.r)
 *   delete  unlinkat(dirfd, path.r, 0)
 *
 * Workers are threads (as dfsbench's workers on a blocking backend) or processes. A phase is
 * timed from just before the workers are released to the moment the last one finishes, with
 * clock_gettime(CLOCK_MONOTONIC); the phase prints one line:
 *
 *   <phase> <ops> <errors> <seconds> <ops_per_sec> <cpu_seconds>
 *
 * where cpu_seconds is the user + system time the workers used in the phase (getrusage), the
 * figure dfsbench reports as phases[].cpu.user_s + sys_s.
 *
 * The per-worker directories are removed at the end. No per-operation timing, formatting
 * beyond the path digits, or allocation: this is the ceiling a tool can reach.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { CREATE, STAT, OPEN, RENAME, DELETE, NPHASES };
static const char *phase_names[NPHASES] = {"create", "stat", "open", "rename", "delete"};

/* Shared between workers (and processes, hence in a MAP_SHARED mapping). */
struct shared {
    pthread_barrier_t barrier;
    int phase;
    uint64_t errors[NPHASES];
    int first_errno[NPHASES];
    uint64_t cpu_ns[NPHASES]; /* summed by worker processes (procs mode) */
};

static struct shared *sh;
static int dirfd_;
static uint64_t files;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* User + system time of this process so far, in nanoseconds. */
static uint64_t cpu_ns(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

static int procs;

/* Append the decimal digits of v at p; return the new end. */
static char *put_num(char *p, uint64_t v) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static void run_phase(int phase, int w) {
    char a[256], b[256];
    /* prefix "j0-meta/w<w>/w<w>.f" */
    char *p = a;
    p = stpcpy(p, "j0-meta/w");
    p = put_num(p, (uint64_t)w);
    p = stpcpy(p, "/w");
    p = put_num(p, (uint64_t)w);
    p = stpcpy(p, ".f");
    size_t prefix = (size_t)(p - a);
    memcpy(b, a, prefix);
    uint64_t errors = 0;
    int first = 0;
    struct stat st;
    for (uint64_t i = 0; i < files; i++) {
        char *end = put_num(a + prefix, i);
        *end = '\0';
        int ret;
        switch (phase) {
        case CREATE:
            ret = openat(dirfd_, a, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
            if (ret >= 0)
                ret = close(ret);
            break;
        case STAT:
            ret = fstatat(dirfd_, a, &st, 0);
            break;
        case OPEN:
            ret = openat(dirfd_, a, O_RDONLY | O_CLOEXEC);
            if (ret >= 0)
                ret = close(ret);
            break;
        case RENAME: {
            char *e = put_num(b + prefix, i);
            memcpy(e, ".r", 3);
            ret = renameat(dirfd_, a, dirfd_, b);
            break;
        }
        default: /* DELETE: the renamed file */
            memcpy(end, ".r", 3);
            ret = unlinkat(dirfd_, a, 0);
            break;
        }
        if (ret < 0) {
            if (!errors)
                first = errno;
            errors++;
        }
    }
    if (errors) {
        __atomic_fetch_add(&sh->errors[phase], errors, __ATOMIC_RELAXED);
        int zero = 0;
        __atomic_compare_exchange_n(&sh->first_errno[phase], &zero, first, 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
    }
}

/* A worker waits at the barrier for each phase, runs it, and waits again at its end. */
static void *worker(void *arg) {
    int w = (int)(intptr_t)arg;
    for (;;) {
        pthread_barrier_wait(&sh->barrier);
        int phase = __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
        if (phase < 0)
            return NULL;
        uint64_t c0 = procs ? cpu_ns() : 0;
        run_phase(phase, w);
        if (procs)
            __atomic_fetch_add(&sh->cpu_ns[phase], cpu_ns() - c0, __ATOMIC_RELAXED);
        pthread_barrier_wait(&sh->barrier);
    }
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: %s DIR FILES WORKERS [threads|procs]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    files = strtoull(argv[2], NULL, 10);
    int workers = atoi(argv[3]);
    procs = argc == 5 && strcmp(argv[4], "procs") == 0;
    if (argc == 5 && !procs && strcmp(argv[4], "threads") != 0) {
        fprintf(stderr, "mode must be threads or procs\n");
        return 2;
    }
    if (workers < 1 || workers > 4096 || files == 0) {
        fprintf(stderr, "FILES and WORKERS must be positive\n");
        return 2;
    }

    dirfd_ = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd_ < 0)
        die(dir);
    if (mkdirat(dirfd_, "j0-meta", 0755) < 0)
        die("mkdir j0-meta");
    char path[64];
    for (int w = 0; w < workers; w++) {
        snprintf(path, sizeof path, "j0-meta/w%d", w);
        if (mkdirat(dirfd_, path, 0755) < 0)
            die(path);
    }

    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        die("mmap");
    pthread_barrierattr_t attr;
    pthread_barrierattr_init(&attr);
    if (procs)
        pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&sh->barrier, &attr, (unsigned)workers + 1);

    pthread_t *threads = calloc((size_t)workers, sizeof *threads);
    pid_t *pids = calloc((size_t)workers, sizeof *pids);
    for (int w = 0; w < workers; w++) {
        if (procs) {
            pid_t pid = fork();
            if (pid < 0)
                die("fork");
            if (pid == 0) {
                worker((void *)(intptr_t)w);
                _exit(0);
            }
            pids[w] = pid;
        } else if (pthread_create(&threads[w], NULL, worker, (void *)(intptr_t)w) != 0) {
            die("pthread_create");
        }
    }

    int failed = 0;
    for (int phase = 0; phase < NPHASES; phase++) {
        __atomic_store_n(&sh->phase, phase, __ATOMIC_RELEASE);
        uint64_t c0 = cpu_ns();
        double t0 = now();
        pthread_barrier_wait(&sh->barrier); /* start */
        pthread_barrier_wait(&sh->barrier); /* every worker done */
        double secs = now() - t0;
        /* threads: the whole process, as dfsbench measures itself; procs: what the workers
         * summed up */
        uint64_t cpu = procs ? sh->cpu_ns[phase] : cpu_ns() - c0;
        uint64_t ops = files * (uint64_t)workers - sh->errors[phase];
        printf("%s %llu %llu %.6f %.1f %.6f\n", phase_names[phase], (unsigned long long)ops,
               (unsigned long long)sh->errors[phase], secs, (double)ops / secs, (double)cpu * 1e-9);
        fflush(stdout);
        if (sh->errors[phase]) {
            fprintf(stderr, "%s: %llu errors, first: %s\n", phase_names[phase],
                    (unsigned long long)sh->errors[phase], strerror(sh->first_errno[phase]));
            failed = 1;
        }
    }
    __atomic_store_n(&sh->phase, -1, __ATOMIC_RELEASE);
    pthread_barrier_wait(&sh->barrier);
    for (int w = 0; w < workers; w++) {
        if (procs)
            waitpid(pids[w], NULL, 0);
        else
            pthread_join(threads[w], NULL);
    }

    for (int w = 0; w < workers; w++) {
        snprintf(path, sizeof path, "j0-meta/w%d", w);
        if (unlinkat(dirfd_, path, AT_REMOVEDIR) < 0) {
            perror(path);
            failed = 1;
        }
    }
    if (unlinkat(dirfd_, "j0-meta", AT_REMOVEDIR) < 0) {
        perror("rmdir j0-meta");
        failed = 1;
    }
    return failed;
}
