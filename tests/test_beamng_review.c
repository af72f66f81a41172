/* Library review tests for BeamNG import and validate: bad maps, folders that are not levels,
 * finding positions. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "test.h"

static char tmp[512];

static void test_validate_not_a_level(void)
{
    char dir[700], p[1024];
    snprintf(dir, sizeof dir, "%s/not_a_level", tmp);
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(p, sizeof p, "%s/materials.json", dir);
    CHECK(trn_test_write_file(p, "{", 1));
    trn_findings f = {0};
    trn_error e;
    CHECK_STATUS(trn_beamng_validate(dir, NULL, &f, NULL, NULL, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(f.count, 0);
    CHECK(strcmp(e.file, dir) == 0);
    CHECK_EQ_INT(e.offset, -1);
    CHECK_CONTAINS(e.message, "does not look like a BeamNG level");
    /* One marker is enough: main/ makes it a level (with no TerrainBlock yet). */
    snprintf(p, sizeof p, "%s/main", dir);
    CHECK(mkdir(p, 0755) == 0);
    CHECK_OK(trn_beamng_validate(dir, NULL, &f, NULL, NULL, &e));
    CHECK(trn_findings_find(&f, "terrain-block-missing") != NULL);
    CHECK(trn_findings_find(&f, "materials-invalid") != NULL);
    trn_findings_dispose(&f);
    /* A file is refused as such. */
    snprintf(p, sizeof p, "%s/materials.json", dir);
    CHECK_STATUS(trn_beamng_validate(p, NULL, &f, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "is a file, not a level folder");
    CHECK(strcmp(e.file, p) == 0);
    trn_findings_dispose(&f);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_validate_not_a_level);
    return trn_test_finish();
}
