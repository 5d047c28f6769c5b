/* rec_signals.c — fatal signals flush the trace before the application's
 * own handler (or the default action) runs.
 *
 * Our handler is installed for each signal of rec_fatal_signals (an ignored
 * one stays ignored) on top of the action that was there, which it chains
 * to once the trace is flushed: it puts that action back and lets the
 * signal happen again (a synchronous fault by returning to the faulting
 * instruction, any other signal by raising it again), so the application,
 * its handler and its exit status see what they would have seen.
 *
 * Handlers installed later (by the application after the layer loaded, or
 * by a library such as LLVM inside the driver: PoCL installs LLVM's while it
 * initializes, during our first call) replace ours. rec_signals_check()
 * looks at the end of calls, every REC_SIG_CHECK_NS and after any call
 * that took more than 1 ms: a foreign action found installed is pushed on
 * the signal's chain and ours goes on top again.
 * The chain is a stack because such handlers may chain back to the action
 * they replaced, which is ours (LLVM puts it back and returns): our handler
 * then runs again and goes one level down. Each installation of ours uses
 * one of REC_SIG_GENS handler functions, its generation, so a check that
 * finds an older generation of ours installed (the application restored
 * the action it had saved) drops the levels pushed since.
 *
 * Once our handler ran for a signal and the process lived on (a runtime
 * that handles its own faults, a graceful SIGTERM), that signal is left to
 * the application from then on.
 *
 * Limit: a handler installed after the application's last OpenCL call (or
 * less than REC_SIG_CHECK_NS before the crash) runs without our flush; the
 * trace then holds what the periodic flush (flush_ms) had written. */
#include "recorder/rec_int.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

#define REC_SIG_GENS 8                       /* generations = chain depth */

static const int rec_fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
                                        SIGTERM, SIGINT, SIGQUIT, SIGHUP};
#define REC_NSIG (sizeof rec_fatal_signals / sizeof rec_fatal_signals[0])

/* One level of a signal's chain: the action ours was installed on top of,
 * and the generation of ours installed there. */
typedef struct rec_sig_level {
    struct sigaction below;
    int gen;
} rec_sig_level;

typedef struct rec_sig_chain {
    rec_sig_level lv[REC_SIG_GENS];
    volatile sig_atomic_t n;                 /* levels in use */
    volatile sig_atomic_t fired;             /* our handler ran and the process lived on */
    int next_gen;                            /* where the search for a free one starts */
} rec_sig_chain;

static rec_sig_chain rec_chains[REC_NSIG];
static pthread_mutex_t rec_sig_lock = PTHREAD_MUTEX_INITIALIZER;
_Atomic int64_t rec_sig_checked;   /* rec_int.h: read by rec_end_done */

static void rec_on_signal(int gen, int sig, siginfo_t *info, void *uctx);

#define REC_SIG_TRAMPOLINE(g) \
    static void rec_on_signal_##g(int sig, siginfo_t *info, void *uctx) \
    { rec_on_signal(g, sig, info, uctx); }
REC_SIG_TRAMPOLINE(0) REC_SIG_TRAMPOLINE(1) REC_SIG_TRAMPOLINE(2) REC_SIG_TRAMPOLINE(3)
REC_SIG_TRAMPOLINE(4) REC_SIG_TRAMPOLINE(5) REC_SIG_TRAMPOLINE(6) REC_SIG_TRAMPOLINE(7)
static void (*const rec_sig_gen_fn[REC_SIG_GENS])(int, siginfo_t *, void *) = {
    rec_on_signal_0, rec_on_signal_1, rec_on_signal_2, rec_on_signal_3,
    rec_on_signal_4, rec_on_signal_5, rec_on_signal_6, rec_on_signal_7};

static int rec_sig_index(int sig)
{
    for (size_t i = 0; i < REC_NSIG; i++)
        if (rec_fatal_signals[i] == sig)
            return (int)i;
    return -1;
}

/* The generation of ours that @p a is, or -1 when it is not ours. */
static int rec_sig_gen_of(const struct sigaction *a)
{
    if (!(a->sa_flags & SA_SIGINFO))
        return -1;
    for (int g = 0; g < REC_SIG_GENS; g++)
        if (a->sa_sigaction == rec_sig_gen_fn[g])
            return g;
    return -1;
}

/* The level whose ours has generation @p gen, or -1. */
static int rec_sig_level_of(const rec_sig_chain *ch, int gen)
{
    for (int k = (int)ch->n - 1; k >= 0; k--)
        if (ch->lv[k].gen == gen)
            return k;
    return -1;
}

static void rec_on_signal(int gen, int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    if (rec_g.active && rec_g.w)
        tf_writer_crash_flush(rec_g.w, 2000);
    int i = rec_sig_index(sig);
    struct sigaction below;
    memset(&below, 0, sizeof below);
    below.sa_handler = SIG_DFL;
    if (i >= 0) {
        rec_sig_chain *ch = &rec_chains[i];
        ch->fired = 1;
        int k = rec_sig_level_of(ch, gen);
        if (k >= 0) {
            below = ch->lv[k].below;
            ch->n = k;   /* this level and the stale ones above it are used up */
        }
    }
    sigaction(sig, &below, NULL);   /* chain: theirs, or the default */
    int fault = (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE)
                && info && info->si_code > 0;
    if (!fault)
        raise(sig);   /* pending until we return: then it reaches `below` */
    /* a synchronous fault: returning re-executes the faulting instruction */
}

/* Puts ours on top of what is installed for signal index @p i, when that
 * is not ours already (rec_sig_lock held). */
static void rec_sig_check_one(size_t i)
{
    rec_sig_chain *ch = &rec_chains[i];
    int sig = rec_fatal_signals[i];
    struct sigaction cur, ours;
    memset(&cur, 0, sizeof cur);   /* glibc fills only part of sa_mask: keep memcmp exact */
    if (sigaction(sig, NULL, &cur) != 0)
        return;
    /* the signal was handled and the process went on: it is not fatal to
     * this application (a runtime that handles its own faults, a graceful
     * SIGTERM); stop flushing at every one */
    if (ch->fired)
        return;
    int g = rec_sig_gen_of(&cur);
    if (g >= 0) {
        int k = rec_sig_level_of(ch, g);
        if (k >= 0)
            ch->n = k + 1;   /* the application put back an older ours */
        return;
    }
    /* an ignored signal stays ignored: nothing the application sees changes */
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
        return;
    int k = (int)ch->n, gen;
    if (k > 0 && !memcmp(&ch->lv[k - 1].below, &cur, sizeof cur)) {
        /* the same action again (put over the same ours): the same level,
         * ours of the same generation */
        k--;
        gen = ch->lv[k].gen;
    } else if (k == REC_SIG_GENS) {
        return;   /* chain full: leave theirs alone (no flush for this signal) */
    } else {
        /* a generation no level below uses (k < REC_SIG_GENS levels) */
        gen = ch->next_gen;
        for (int j = 0; j < k; j++) {
            if (ch->lv[j].gen == gen) {
                gen = (gen + 1) % REC_SIG_GENS;
                j = -1;
            }
        }
        ch->next_gen = (gen + 1) % REC_SIG_GENS;
    }
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = rec_sig_gen_fn[gen];
    ours.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
    sigemptyset(&ours.sa_mask);
    ch->lv[k].below = cur;
    ch->lv[k].gen = gen;
    atomic_signal_fence(memory_order_seq_cst);
    ch->n = k + 1;
    sigaction(sig, &ours, NULL);
}

void rec_signals_install(void)
{
    pthread_mutex_lock(&rec_sig_lock);
    for (size_t i = 0; i < REC_NSIG; i++)
        rec_sig_check_one(i);
    atomic_store(&rec_sig_checked, rec_now_ns());
    pthread_mutex_unlock(&rec_sig_lock);
}

void rec_signals_check(int64_t now, int force)
{
    if (!force && now - atomic_load_explicit(&rec_sig_checked, memory_order_relaxed) < REC_SIG_CHECK_NS)
        return;
    if (pthread_mutex_trylock(&rec_sig_lock) != 0)
        return;   /* another thread is checking */
    for (size_t i = 0; i < REC_NSIG; i++)
        rec_sig_check_one(i);
    atomic_store(&rec_sig_checked, now);
    pthread_mutex_unlock(&rec_sig_lock);
}
