/* terrane recover: finish or discard writes that stopped part-way (crash, kill, power loss). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const help_text =
    "usage: terrane recover DIR [--dry-run] [options]\n"
    "\n"
    "Every verb that writes several files (a BeamNG level, a Unity export, an image set) lands\n"
    "them together: it writes each new file beside its destination first, records the set in a\n"
    "small journal (.terrane-journal-XXXXXX) in each folder it writes into, then renames them\n"
    "all into place. If the run dies during those renames, the folder holds some new and some\n"
    "old files; the next run that writes into that folder finishes its part first, and\n"
    "`beamng validate` reports it. recover does the same now, for DIR and every folder below it:\n"
    "  - a set whose journal is complete is finished (its new files are put in place);\n"
    "  - a set that died before committing is discarded (the old files were never touched);\n"
    "  - temporaries (NAME.tmp-XXXXXX) left by dead runs are deleted.\n"
    "Journals held by a running terrane are left alone. Symbolic links are not followed.\n"
    "A journal names only files of its own folder and is replayed only when it belongs to\n"
    "the user running terrane; any other journal is refused (exit 1) and left as it is.\n"
    "\n"
    "options:\n"
    "  --dry-run          say what would be done, change nothing\n"
    "  --format json      the counts as JSON on stdout\n"
    "  -q, --quiet        no notes\n"
    "\n"
    "examples:\n"
    "  terrane recover levels/alps\n"
    "  terrane recover out/unity --dry-run\n";

int cli_verb_recover(cli_ctx *ctx, int argc, char **argv)
{
    const char *dir = NULL;
    bool dry = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(a, "--dry-run") == 0)
            dry = true;
        else if (a[0] == '-' && a[1])
            return cli_usage_error(ctx, "unknown option '%s'", a);
        else if (!dir)
            dir = a;
        else
            return cli_usage_error(ctx, "takes one folder; unexpected '%s'", a);
    }
    if (!dir) return cli_usage_error(ctx, "needs a folder (a level, an export folder)");
    trn_recovery_report rep;
    trn_error e;
    trn_status st =
        dry ? trn_write_set_scan(dir, true, &rep, &e) : trn_write_set_recover(dir, true, &rep, &e);
    if (st) return cli_fail(ctx, &e);
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(dir));
        json_object_set_new(o, "dry_run", json_boolean(dry));
        json_object_set_new(o, "finished", json_integer(rep.completed));
        json_object_set_new(o, "discarded", json_integer(rep.discarded));
        json_object_set_new(o, "temporaries_removed", json_integer(rep.temporaries_removed));
        json_object_set_new(o, "in_progress", json_integer(rep.in_progress));
        json_object_set_new(o, "refused", json_integer(rep.refused));
        if (rep.refused)
            json_object_set_new(o, "refused_reason", cli_json_string(rep.refused_reason));
        cli_print_json(o);
    } else if (!rep.completed && !rep.discarded && !rep.temporaries_removed && !rep.in_progress &&
               !rep.refused) {
        cli_note(ctx, "%s: nothing to recover", dir);
    } else {
        const char *verb = dry ? "would finish" : "finished";
        cli_note(ctx,
                 "%s: %s %u interrupted write(s), %s %u that never committed, %s %u "
                 "temporary file(s)",
                 dir, verb, rep.completed, dry ? "would discard" : "discarded", rep.discarded,
                 dry ? "would delete" : "deleted", rep.temporaries_removed);
        if (rep.in_progress)
            cli_note(ctx, "%s: %u write(s) in progress by another process were left alone", dir,
                     rep.in_progress);
    }
    if (rep.refused) {
        /* A journal someone else put here could rename or delete any file: never replayed. */
        if (ctx->json) return CLI_EXIT_FAIL; /* the report above says so */
        return cli_failf(ctx,
                  "%s: refused %u write journal(s) this user did not write; nothing was changed "
                  "by them: %s. Delete such a journal if you did not expect it",
                  dir, rep.refused, rep.refused_reason);
    }
    return CLI_EXIT_OK;
}
