/*
 * A parallel launcher for TVM's CPU kernels in which a caller never waits for a task nobody has started.
 *
 * TVM's own pool hands task i of a launch to pool thread i and the calling thread spins until every one has run:
 * when the scheduler has not run thread i yet (a server's connection threads share the cores), the call waits a
 * time slice. Here the tasks of a launch are claimed one at a time from a shared counter, by the calling thread and
 * by any idle helper, so a helper that comes late finds its tasks already run by the caller, and the caller waits
 * only for tasks a helper has begun.
 *
 * A module uses it once its __TVMBackendParallelLaunch pointer (which TVM fills when the library loads) holds
 * axe4j_parallel_launch (org.axe4j.tvm.ParallelPool.adopt). A task's error is TVM's: a helper moves it out of its
 * thread-local slot and the caller raises it in its own, as TVM's pool does.
 */
#define _GNU_SOURCE
#include <jni.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* TVM's TVMParallelGroupEnv and FTVMParallelLambda (tvm/runtime/c_backend_api.h), declared by hand. */
typedef struct {
    void *sync_handle;
    int32_t num_task;
} parallel_env;
typedef int (*parallel_lambda)(int task_id, parallel_env *env, void *cdata);

/* tvm-ffi's error slot: TVMFFIErrorMoveFromRaised, TVMFFIErrorSetRaised (takes no ownership), TVMFFIObjectDecRef. */
typedef void (*error_move_from_raised)(void **result);
typedef void (*error_set_raised)(void *error);
typedef int (*object_dec_ref)(void *object);

/*
 * One launch, on its caller's stack: it outlives every helper inside it (the caller waits for `inside` = 0). The
 * caller sleeps on the counter it waits for (a futex on `unfinished`, then on `inside`), so every change it waits for
 * is a change of the word it sleeps on: a wake that comes before the sleep makes the sleep return at once.
 */
struct job {
    parallel_lambda lambda;
    void *cdata;
    parallel_env env;
    atomic_int next;        /* the next task nobody has claimed */
    atomic_int unfinished;  /* tasks not yet run to the end */
    atomic_int inside;      /* helpers that entered and have not left */
    atomic_int failed;      /* set by the first helper whose task failed */
    void *error;            /* that helper's error, owned */
};

#define MAX_OPEN 64   /* launches open to helpers at once; more run on their callers alone */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static struct job *open_jobs[MAX_OPEN];
static atomic_int open_count;   /* written under `lock`; a spinning helper reads it without */
static int helpers;               /* started helper threads; set once */
static int tasks_per_launch = 1;  /* num_task when a kernel passes 0 */
static atomic_int held;           /* tests: while set, helpers claim nothing */
static atomic_int adaptive = 1;   /* tests may turn the per-loop choice below off */
static atomic_long run_by_callers, run_by_helpers;
static error_move_from_raised move_from_raised;
static error_set_raised set_raised;
static object_dec_ref dec_ref;
static __thread int on_helper;    /* a launch from inside a task runs on its caller */

static void futex_wake_all(atomic_int *word) {
    syscall(SYS_futex, (int32_t *) word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

static void futex_wait(atomic_int *word, int seen) {
    syscall(SYS_futex, (int32_t *) word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

/* An open job with a task left to claim, or NULL; under `lock`. */
static struct job *claimable(void) {
    for (int i = 0; i < open_count; i++) {
        struct job *j = open_jobs[i];
        if (atomic_load(&j->next) < j->env.num_task) {
            return j;
        }
    }
    return NULL;
}

static void finish_task(struct job *j) {
    if (atomic_fetch_sub(&j->unfinished, 1) == 1) {
        futex_wake_all(&j->unfinished);
    }
}

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

/*
 * A helper that has just left a launch watches for the next one for SPIN_NS before it sleeps: a kernel is often several
 * parallel loops in a row (a GEMM's packing and its blocks, per K block), each of which would otherwise wait for the
 * helper's wake-up (tens of microseconds); between requests the helper sleeps, leaving the core to the server.
 */
#define SPIN_NS 50000

static void *helper_main(void *unused) {
    (void) unused;
    on_helper = 1;
    for (;;) {
        for (long until = now_ns() + SPIN_NS; atomic_load(&open_count) == 0 && now_ns() < until;) {
            for (int i = 0; i < 64; i++) {
                __builtin_ia32_pause();
            }
        }
        pthread_mutex_lock(&lock);
        struct job *j = NULL;
        while (atomic_load(&held) || (j = claimable()) == NULL) {
            pthread_cond_wait(&work, &lock);
        }
        atomic_fetch_add(&j->inside, 1);   /* under the lock: the caller retracts its job under it too */
        pthread_mutex_unlock(&lock);
        int task;
        while ((task = atomic_fetch_add(&j->next, 1)) < j->env.num_task) {
            if (j->lambda(task, &j->env, j->cdata) != 0) {
                void *error = NULL;
                move_from_raised(&error);
                if (atomic_exchange(&j->failed, 1) == 0) {
                    j->error = error;
                } else if (error != NULL) {
                    dec_ref(error);
                }
            }
            atomic_fetch_add(&run_by_helpers, 1);
            finish_task(j);
        }
        /* once inside is 0 the caller may return: j is not touched after it, the wake is a syscall on its address
         * only (harmless if the caller has gone; a waiter re-checks its word) */
        if (atomic_fetch_sub(&j->inside, 1) == 1) {
            futex_wake_all(&j->inside);
        }
    }
    return NULL;
}

/*
 * Per parallel loop (its lambda): how many launches to run on the caller alone. A launch with less than short_ns
 * (100 us) of work (its time on each thread that ran a task) gains less from a helper than the helper's wake-up costs
 * the other cores, where a server's connection threads want to run (gemm 128^3 through axe serve: 8,000 calls/s on
 * one thread, 4,800-7,600 with a helper): the loop's next SKIP launches run on the caller alone, then one launch
 * asks the helpers again. A longer launch keeps asking, even one a helper missed: the next may find it.
 */
#define SITES 256
#define SKIP 63
static _Atomic long short_ns = 100000;   /* tests may change it */
struct site {
    _Atomic uintptr_t lambda;
    atomic_int skip;
};
static struct site sites[SITES];

static struct site *site_of(parallel_lambda lambda) {
    uintptr_t key = (uintptr_t) lambda;
    unsigned start = (unsigned) ((key >> 4) * 2654435761u) % SITES;
    for (unsigned probe = 0; probe < 8; probe++) {
        struct site *s = &sites[(start + probe) % SITES];
        uintptr_t seen = atomic_load(&s->lambda);
        if (seen == 0 && atomic_compare_exchange_strong(&s->lambda, &seen, key)) {
            return s;
        }
        if (seen == key) {
            return s;
        }
    }
    return NULL;   /* table crowded: this loop always asks the helpers */
}

static int run_inline(parallel_lambda lambda, void *cdata, int num_task) {
    parallel_env env = {NULL, num_task};
    int status = 0;
    for (int task = 0; task < num_task; task++) {
        if (lambda(task, &env, cdata) != 0 && status == 0) {
            status = -1;   /* the first error stays in this thread's slot, as TVM's pool leaves it */
        }
    }
    atomic_fetch_add(&run_by_callers, num_task);
    return status;
}

int axe4j_parallel_launch(parallel_lambda lambda, void *cdata, int num_task) {
    if (num_task <= 0) {
        num_task = tasks_per_launch;
    }
    if (on_helper || helpers == 0 || num_task == 1) {
        return run_inline(lambda, cdata, num_task);
    }
    struct site *site = atomic_load(&adaptive) ? site_of(lambda) : NULL;
    if (site != NULL && atomic_load(&site->skip) > 0) {
        atomic_fetch_sub(&site->skip, 1);
        return run_inline(lambda, cdata, num_task);
    }
    struct timespec began;
    clock_gettime(CLOCK_MONOTONIC, &began);
    struct job j = {.lambda = lambda, .cdata = cdata, .env = {NULL, num_task}, .error = NULL};
    atomic_init(&j.next, 0);
    atomic_init(&j.unfinished, num_task);
    atomic_init(&j.inside, 0);
    atomic_init(&j.failed, 0);
    pthread_mutex_lock(&lock);
    if (open_count == MAX_OPEN) {
        pthread_mutex_unlock(&lock);
        return run_inline(lambda, cdata, num_task);
    }
    open_jobs[open_count++] = &j;
    pthread_cond_broadcast(&work);
    pthread_mutex_unlock(&lock);

    int status = 0;
    int task;
    int by_caller = 0;
    while ((task = atomic_fetch_add(&j.next, 1)) < num_task) {
        if (lambda(task, &j.env, cdata) != 0) {
            status = -1;   /* this thread's own error is in its slot already */
        }
        by_caller++;
        finish_task(&j);
    }
    atomic_fetch_add(&run_by_callers, by_caller);
    if (site != NULL) {   /* the launch's work: its time on each thread that ran a task */
        struct timespec ended;
        clock_gettime(CLOCK_MONOTONIC, &ended);
        long elapsed = (ended.tv_sec - began.tv_sec) * 1000000000L + (ended.tv_nsec - began.tv_nsec);
        int threads = by_caller == num_task ? 1 : (num_task < helpers + 1 ? num_task : helpers + 1);
        if (elapsed * threads < atomic_load(&short_ns)) {
            atomic_store(&site->skip, SKIP);
        }
    }
    pthread_mutex_lock(&lock);   /* retract: no helper enters after this */
    for (int i = 0; i < open_count; i++) {
        if (open_jobs[i] == &j) {
            open_jobs[i] = open_jobs[--open_count];
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    for (int spin = 0;; spin++) {   /* only tasks a helper has begun remain, and helpers inside */
        int unfinished = atomic_load(&j.unfinished);
        int inside = atomic_load(&j.inside);
        if (unfinished == 0 && inside == 0) {
            break;
        }
        if (spin < 256) {
            __builtin_ia32_pause();
        } else if (unfinished != 0) {
            futex_wait(&j.unfinished, unfinished);
        } else {
            futex_wait(&j.inside, inside);
        }
    }
    if (j.error != NULL) {
        if (status == 0) {
            set_raised(j.error);   /* the slot takes its own reference */
        }
        dec_ref(j.error);
        status = -1;
    }
    return status;
}

JNIEXPORT jint JNICALL
Java_org_axe4j_tvm_ParallelPool_startNative(JNIEnv *env, jclass cls, jint helper_threads, jint tasks, jlong move_address,
                                      jlong set_address, jlong dec_ref_address) {
    (void) env;
    (void) cls;
    pthread_mutex_lock(&lock);
    if (helpers == 0 && helper_threads > 0) {
        move_from_raised = (error_move_from_raised) (intptr_t) move_address;
        set_raised = (error_set_raised) (intptr_t) set_address;
        dec_ref = (object_dec_ref) (intptr_t) dec_ref_address;
        tasks_per_launch = tasks > 0 ? tasks : 1;
        for (int i = 0; i < helper_threads; i++) {
            pthread_t thread;
            if (pthread_create(&thread, NULL, helper_main, NULL) != 0) {
                break;
            }
            pthread_detach(thread);
            helpers++;
        }
    } else if (helpers == 0) {
        tasks_per_launch = tasks > 0 ? tasks : 1;
    }
    int started = helpers;
    pthread_mutex_unlock(&lock);
    return started;
}

JNIEXPORT jlong JNICALL
Java_org_axe4j_tvm_ParallelPool_launcher(JNIEnv *env, jclass cls) {
    (void) env;
    (void) cls;
    return (jlong) (intptr_t) &axe4j_parallel_launch;
}

JNIEXPORT jint JNICALL
Java_org_axe4j_tvm_ParallelPool_tasksPerLaunch(JNIEnv *env, jclass cls) {
    (void) env;
    (void) cls;
    return tasks_per_launch;
}

JNIEXPORT void JNICALL
Java_org_axe4j_tvm_ParallelPool_hold(JNIEnv *env, jclass cls, jboolean on) {
    (void) env;
    (void) cls;
    pthread_mutex_lock(&lock);
    atomic_store(&held, on ? 1 : 0);
    pthread_cond_broadcast(&work);
    pthread_mutex_unlock(&lock);
}

JNIEXPORT void JNICALL
Java_org_axe4j_tvm_ParallelPool_adaptive(JNIEnv *env, jclass cls, jboolean on, jlong short_launch_ns) {
    (void) env;
    (void) cls;
    atomic_store(&short_ns, short_launch_ns);
    atomic_store(&adaptive, on ? 1 : 0);
}

JNIEXPORT jlong JNICALL
Java_org_axe4j_tvm_ParallelPool_tasksRun(JNIEnv *env, jclass cls, jboolean by_helpers) {
    (void) env;
    (void) cls;
    return by_helpers ? atomic_load(&run_by_helpers) : atomic_load(&run_by_callers);
}
