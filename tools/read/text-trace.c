/* text-trace.c - a dump written as its text form (text-trace.h); the
 * other way, text -> dump, is text-trace-parse.c. */
#include "text-trace.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "hook-abi.h"
#include "sample-text.h"

/* ---- names of the X-macro lists ------------------------------------------- */

static const char *event_name(unsigned kind, unsigned ext)
{
    if (kind == INSTR_EV_EXT) {
        switch (ext) {
            INSTR_EXT_KINDS(INSTR_X_TEXT_CASE)
        }
        return NULL;
    }
    switch (kind) {
        INSTR_EVENT_KINDS(INSTR_X_TEXT_CASE)
    }
    return NULL;
}

const char *const instr_text_unwind_names[4] = {NULL, "exception", "stack", "mismatch"};

const char *instr_os_bits_str(unsigned bits, char *buf, size_t len)
{
    unsigned known = 0;
#define INSTR_X_OR(name, value, text) known |= value;
    INSTR_OS_KINDS(INSTR_X_OR)
#undef INSTR_X_OR
    if (bits == 0) {
        snprintf(buf, len, "none");
    } else if (bits & ~known) {
        snprintf(buf, len, "%#x", bits);
    } else {
        size_t n = 0;
        buf[0] = 0;
#define INSTR_X_CAT(name, value, text)                                                             \
    if ((bits & value) && n < len)                                                                 \
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", text);
        INSTR_OS_KINDS(INSTR_X_CAT)
#undef INSTR_X_CAT
    }
    return buf;
}

/* ---- dump -> text ----------------------------------------------------------- */

/* Writes s as a value: bare if safe, else quoted. */
static void put_value(FILE *out, const char *s)
{
    if (!s)
        s = "";
    if (*s && !strpbrk(s, " \t\"\\#=")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

int instr_text_write(FILE *out, const struct instr_dump *d, size_t *nbad, char *err, size_t errlen)
{
    const struct instr_dump_header *h = &d->hdr;
    char bits[64];
    *nbad = 0;
    fprintf(out, "instr-dump 1\n");
    for (size_t i = 0; i < d->nwarnings; i++)
        fprintf(out, "# warning: %s\n", d->warnings[i]);
    fprintf(out, "header pid=%" PRIu64 " ppid=%" PRIu64 " exe=", h->pid, h->ppid);
    put_value(out, h->exe_path);
    fprintf(out,
            " start_tsc=%" PRIu64 " start_ns=%" PRIu64 " real_ns=%" PRIu64 " end_tsc=%" PRIu64 " end_ns=%" PRIu64
            " last_tsc=%" PRIu64 " last_ns=%" PRIu64 " detector=%s",
            h->start_tsc, h->start_mono_ns, h->start_real_ns, h->end_tsc, h->end_mono_ns, h->last_tsc,
            h->last_mono_ns, instr_detector_name(h->detector));
    if (h->detector_set) {
        const char *sep = "";
        fputs(" detectors=", out);
        for (uint32_t k = 0; k < 32; k++)
            if (h->detector_set >> k & 1)
                fprintf(out, "%s%s", sep, instr_detector_name(k)), sep = "+";
    }
    fprintf(out, " sees=%s flags=", instr_os_bits_str(h->detector_sees, bits, sizeof bits));
    const char *sep = "";
    if (!(h->flags & (63 | INSTR_DUMP_SWITCHED_OFF | INSTR_DUMP_SLOW_PATH_JOINED)))
        fputs("none", out);
    if (h->flags & INSTR_DUMP_COMPLETE)
        fputs("complete", out), sep = ",";
    if (h->flags & INSTR_DUMP_FORK_CHILD)
        fprintf(out, "%sfork_child", sep), sep = ",";
    if (h->flags & INSTR_DUMP_TSC_INVARIANT)
        fprintf(out, "%stsc_invariant", sep), sep = ",";
    if (h->flags & INSTR_DUMP_SIGNALED)
        fprintf(out, "%ssignaled", sep), sep = ",";
    if (h->flags & INSTR_DUMP_NO_TRANSITIONS)
        fprintf(out, "%sno_transitions", sep), sep = ",";
    if (h->flags & INSTR_DUMP_SAMPLED)
        fprintf(out, "%ssampled", sep), sep = ",";
    if (h->flags & INSTR_DUMP_SWITCHED_OFF)
        fprintf(out, "%sswitched_off", sep), sep = ",";
    if (h->flags & INSTR_DUMP_SLOW_PATH_JOINED)
        fprintf(out, "%sslow_path_joined", sep);
    if (h->calibration_path == INSTR_CALIBRATION_PATH_FILTERING) /* absent: the fast path */
        fputs(" hook_cost_path=filtering", out);
    if (h->arch > INSTR_ARCH_X86_64 || h->tick_source > INSTR_TICKS_TSC) /* absent: x86-64's TSC */
        fprintf(out, " arch=%s ticks=%s", instr_arch_name(h->arch), instr_tick_source_name(h->tick_source));
    if (h->end_signal || h->end_signal_tid)
        fprintf(out, " end_signal=%u signal_tid=%u", h->end_signal, h->end_signal_tid);
    if (h->unrecorded_threads)
        fprintf(out, " unrecorded_threads=%u", h->unrecorded_threads);
    if (h->dropped_calls || h->dropped_sites)
        fprintf(out, " dropped_calls=%" PRIu64 " dropped_sites=%" PRIu64, h->dropped_calls, h->dropped_sites);
    if (h->filter_depth || h->filter_min_ticks || h->filter_triggers)
        fprintf(out,
                " filter_depth=%u filter_min_ticks=%" PRIu64 " filter_triggers=%u filtered_depth=%" PRIu64
                " filtered_short=%" PRIu64 " filtered_off=%" PRIu64,
                h->filter_depth, h->filter_min_ticks, h->filter_triggers, h->filtered_depth, h->filtered_short,
                h->filtered_off);
    fprintf(out, " dropped=%" PRIu64 " unmatched=%" PRIu64 " exit_status=%d chunk_size=%u detail=", h->dropped_events,
            h->unmatched_exits, h->exit_status, h->chunk_size);
    put_value(out, h->detector_detail);
    if (h->stop_reason[0]) {
        fputs(" stopped=", out);
        put_value(out, h->stop_reason);
    }
    if (h->host[0]) {
        fputs(" host=", out);
        put_value(out, h->host);
    }
    if (h->job_size) {
        fprintf(out, " rank=%d size=%u job=", h->job_rank, h->job_size);
        put_value(out, h->job_id);
        fputs(" launcher=", out);
        put_value(out, h->job_launcher);
    }
    fputc('\n', out);
    for (size_t i = 0; i < d->nmodules; i++) {
        fprintf(out, "module %" PRIu64 " ", d->modules[i].id);
        put_value(out, d->modules[i].path);
        fprintf(out, " load=%#" PRIx64 "\n", d->modules[i].load_addr);
    }
    for (size_t i = 0; i < d->nfunctions; i++) {
        const struct instr_function *f = &d->functions[i];
        fprintf(out, "function %" PRIu64 " module=%" PRIu64 " line=%" PRIu64 " file=", f->id, f->module, f->line);
        put_value(out, f->file);
        fputs(" name=", out);
        put_value(out, f->name);
        if (f->demangled && f->demangled[0]) {
            fputs(" demangled=", out);
            put_value(out, f->demangled);
        }
        fputc('\n', out);
    }
    for (size_t i = 0; i < d->nlabels; i++) {
        fprintf(out, "label %" PRIu64 " ", d->labels[i].id);
        put_value(out, d->labels[i].text);
        fputc('\n', out);
    }
    /* The reader keeps the UNIT records' sums and extremes: one line
     * carries them at the smallest threshold, a second the largest. */
    if (d->threshold_units) {
        fprintf(out, "unit threshold=%" PRIu64 " left-out=%" PRIu64 " instrumented=%" PRIu64 "\n", d->threshold_min,
                d->threshold_left_out, d->threshold_instrumented);
        if (d->threshold_max != d->threshold_min)
            fprintf(out, "unit threshold=%" PRIu64 " left-out=0 instrumented=0\n", d->threshold_max);
    }
    for (size_t i = 0; i < d->nsites; i++) {
        const struct instr_callsite *cs = &d->sites[i];
        fprintf(out, "callsite %" PRIu64 " caller=%" PRIu64 " line=%" PRIu64 " flags=%s callee=", cs->id,
                cs->caller, cs->line, (cs->flags & INSTR_SITE_INDIRECT) ? "indirect" : "direct");
        put_value(out, cs->callee);
        fprintf(out, " module=%" PRIu64 " offset=%#" PRIx64 " site=%#" PRIx64 "\n", cs->module, cs->callee_off,
                cs->site_off);
    }
    if (d->cwd) {
        fputs("process cwd=", out);
        put_value(out, d->cwd);
        for (size_t i = 0; i < d->argc; i++) {
            fputs(" arg=", out);
            put_value(out, d->argv[i]);
        }
        fputc('\n', out);
    }
    for (unsigned k = 0; k < sizeof d->hook_cost / sizeof d->hook_cost[0]; k++) {
        const struct instr_hook_cost *hc = &d->hook_cost[k];
        if (hc->rounds)
            fprintf(out, "hook-cost %s before=%" PRIu64 " after=%" PRIu64 " spread=%" PRIu64 " rounds=%" PRIu64 "\n",
                    event_name(k, 0) ? event_name(k, 0) : "?", hc->before, hc->after, hc->spread, hc->rounds);
    }
    for (unsigned k = 0; k < d->nclock_sync; k++)
        fprintf(out, "clock-sync %u local=%" PRIu64 " peer=%" PRIu64 " rtt=%" PRIu64 "\n", d->clock_sync[k].peer,
                d->clock_sync[k].local, d->clock_sync[k].peer_ticks, d->clock_sync[k].rtt);
    for (size_t i = 0; i < d->nthreads; i++) {
        const struct instr_thread_info *t = &d->threads[i];
        fprintf(out, "thread %u tid=%" PRIu64, t->index, t->tid);
        if (t->name && *t->name) {
            fputs(" name=", out);
            put_value(out, t->name);
        }
        fputc('\n', out);
        if (t->has_exit_cpu)
            fprintf(out, "exit-cpu %u ns=%" PRIu64 " at=%" PRIu64 "\n", t->index, t->exit_cpu_ns,
                    t->exit_cpu_tick);
    }
    for (size_t i = 0; i < d->nthreads; i++) {
        const struct instr_thread_info *t = &d->threads[i];
        struct instr_event_iter it;
        struct instr_event ev;
        size_t reported = (size_t)-1;
        instr_event_iter_init(&it, t);
        while (instr_event_iter_next(&it, &ev) > 0) {
            if (it.bad && it.bad_chunk != reported) {
                fprintf(out, "# thread %u: chunk seq %u: invalid bytes, rest of the chunk skipped\n", t->index,
                        t->chunks[it.bad_chunk].seq);
                reported = it.bad_chunk;
                ++*nbad;
            }
            fprintf(out, "%u %" PRIu64 " %s", t->index, ev.tick, event_name(ev.kind, ev.ext));
            switch (ev.kind) {
            case INSTR_EV_ENTER:
            case INSTR_EV_CALL:
                fprintf(out, " %" PRIu64, ev.arg);
                break;
            case INSTR_EV_EXT:
                if (ev.ext == INSTR_EXT_UNWIND) {
                    if (ev.arg >= 1 && ev.arg <= 3)
                        fprintf(out, " %s", instr_text_unwind_names[ev.arg]);
                    else
                        fprintf(out, " %" PRIu64, ev.arg);
                } else if (instr_ext_payload(ev.ext) == INSTR_PAYLOAD_VARINT_ZIGZAG) { /* COUNTER, MPI.. */
                    fprintf(out, " %" PRIu64 " %" PRId64, ev.arg, ev.value);
                } else if (ev.ext != INSTR_EXT_THREAD_END) {
                    fprintf(out, " %" PRIu64, ev.arg);
                }
                break;
            }
            if (ev.os) {
                fprintf(out, " os=%s", instr_os_bits_str(ev.bits & ~INSTR_OS_OFFCPU_FOLLOWS, bits, sizeof bits));
                if (ev.bits & INSTR_OS_OFFCPU_FOLLOWS)
                    fprintf(out, " off=%" PRIu64, ev.offcpu);
            }
            fputc('\n', out);
        }
        if (it.bad && it.bad_chunk != reported) {
            fprintf(out, "# thread %u: chunk seq %u: invalid bytes, rest of the chunk skipped\n", t->index,
                    t->chunks[it.bad_chunk].seq);
            ++*nbad;
        }
    }
    instr_sample_text_write(out, d, nbad); /* sampling dumps (sample-text.c) */
    if (ferror(out)) {
        snprintf(err, errlen, "write error: %s", strerror(errno));
        return INSTR_EIO;
    }
    return 0;
}
