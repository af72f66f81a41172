/* A program linked against an installed libterrane (tests/install_test.sh, packaging/check-deb.sh):
 * one call into each library it uses, a .ter written and read back, a located error. */
#include <stdio.h>
#include <string.h>
#include <terrane/beamng.h>
#include <terrane/core.h>
#include <terrane/geotiff.h>
#include <terrane/image.h>
#include <terrane/recipe.h>
#include <terrane/stationeers.h>

/* One call into code using each library libterrane needs, so a static link line missing one
 * fails: libspng and zlib, libtiff, libzip, jansson, xxHash. */
static int dependencies(void)
{
    static const uint8_t not_zip[] = "not a zip archive";
    trn_error err;
    trn_image img = {0};
    trn_geotiff dem = {0};
    trn_recipe recipe = {0};
    uint8_t *data = NULL;
    size_t size = 0;
    if (trn_png_read("/nonexistent/none.png", NULL, &img, &err) == TRN_OK ||
        trn_geotiff_read("/nonexistent/none.tif", NULL, &dem, NULL, NULL, &err) == TRN_OK)
        return 1;
    if (trn_stationeers_save_extract_memory(not_zip, sizeof not_zip, NULL, 0, &data, &size, &err) !=
        TRN_ERR_FORMAT)
        return 1;
    if (trn_recipe_parse("{", 1, NULL, &recipe, NULL, &err) != TRN_ERR_JSON) return 1;
    return trn_subseed(1, "landform") == trn_subseed(2, "landform");
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    if (dependencies() != 0) return 8;
    if (strcmp(trn_status_name(TRN_ERR_TRUNCATED), "TRN_ERR_TRUNCATED") != 0) return 3;
    trn_error err;
    trn_field field = {0};
    trn_ter ter = {0}, back = {0}, missing = {0};
    int rc = 0;
    if (trn_field_init(&field, 4, 4, 8.0, 8.0, &err) != TRN_OK) return 4;
    for (size_t i = 0; i < trn_field_sample_count(&field); i++)
        field.heights[i] = (float)i * 0.5f;
    if (trn_ter_from_field(&field, 100.0, NULL, "grass", &ter, &err) != TRN_OK ||
        trn_ter_write(argv[1], &ter, 9, NULL, NULL, &err) != TRN_OK ||
        trn_ter_read(argv[1], NULL, &back, NULL, NULL, &err) != TRN_OK) {
        fprintf(stderr, "%s: %s\n", trn_status_name(err.code), err.message);
        rc = 5;
    } else if (back.size != 5 ||
               memcmp(back.heights, ter.heights, 25 * sizeof *back.heights) != 0 ||
               back.material_count != 1 || strcmp(back.materials[0], "grass") != 0) {
        rc = 6;
    } else if (trn_ter_read("/nonexistent/none.ter", NULL, &missing, NULL, NULL, &err) == TRN_OK ||
               strcmp(err.file, "/nonexistent/none.ter") != 0) {
        rc = 7;
    }
    trn_ter_dispose(&missing);
    trn_ter_dispose(&back);
    trn_ter_dispose(&ter);
    trn_field_dispose(&field);
    if (rc == 0) printf("ok %s %s\n", TRN_VERSION_STRING, trn_status_name(TRN_OK));
    return rc;
}
