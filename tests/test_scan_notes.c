/* tests/test_scan_notes.c: the optional /provenance notes of a scan file (io/scan.c reads,
 * io/scan_write.c writes them; docs/scan-format.md "Provenance").
 *
 * Notes survive a write and a read, in key order; a file without them still reads and
 * gets none; the setter replaces a key and refuses what the format cannot hold; and the
 * reader refuses a /provenance it cannot take apart, naming the attribute. */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#include "io/scan.h"
#include "recon/error.h"
#include "tests/scan_fixtures.h"
#include "tests/test.h"

DBTR_TEST(notes_round_trip) {
  char dir[64], path[256];
  dbtr_scan s, back;
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "notes.h5");
  REQUIRE_OK(make_scan(&s, DBTR_QUANTITY_COUNTS, DBTR_I0_SCALAR));
  REQUIRE_OK(dbtr_scan_note_set(&s, "source", "(0018,1510) PositionerPrimaryAngle of %d images", 9));
  REQUIRE_OK(dbtr_scan_note_set(&s, "i0", "10000 (--i0)"));
  REQUIRE_OK(dbtr_scan_note_set(&s, "detector", "%s", "")); /* HDF5 has no empty fixed string: a padding byte */
  REQUIRE_OK(dbtr_scan_write(&s, path, NULL));
  REQUIRE_OK(dbtr_scan_read(&back, path));
  REQUIRE(back.n_notes == 3);
  /* The reader lists them in name order, whatever order they were set in. */
  CHECK_STR_CONTAINS(back.notes[0].key, "detector");
  CHECK_EQ_INT(strlen(back.notes[0].text), 0);
  CHECK_STR_CONTAINS(back.notes[1].key, "i0");
  CHECK_STR_CONTAINS(back.notes[1].text, "10000 (--i0)");
  CHECK_STR_CONTAINS(back.notes[2].key, "source");
  CHECK_STR_CONTAINS(back.notes[2].text, "(0018,1510) PositionerPrimaryAngle of 9 images");
  dbtr_scan_free(&back);
  dbtr_scan_free(&s);
  tmp_remove(dir);
}

DBTR_TEST(notes_absent_reads_as_before) {
  char dir[64], path[256];
  dbtr_scan back;
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "plain.h5");
  REQUIRE_OK(write_valid(path));
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK(H5Lexists(f, "/provenance", H5P_DEFAULT) == 0); /* no notes, no group */
  H5Fclose(f);
  REQUIRE_OK(dbtr_scan_read(&back, path));
  CHECK_EQ_U64(back.n_notes, 0);
  dbtr_scan_free(&back);
  tmp_remove(dir);
}

DBTR_TEST(notes_set_replaces_and_limits) {
  dbtr_scan s;
  memset(&s, 0, sizeof s);
  REQUIRE_OK(dbtr_scan_note_set(&s, "i0", "first"));
  REQUIRE_OK(dbtr_scan_note_set(&s, "i0", "second"));
  CHECK_EQ_U64(s.n_notes, 1);
  CHECK_STR_CONTAINS(s.notes[0].text, "second");
  CHECK(dbtr_scan_note_set(&s, "a_key_of_thirty_two_characters__", "x") == DBTR_EINVAL);
  CHECK(dbtr_scan_note_set(&s, "", "x") == DBTR_EINVAL);
  char key[8];
  for (int i = 1; i < DBTR_SCAN_MAX_NOTES; i++) {
    snprintf(key, sizeof key, "k%d", i);
    CHECK_OK(dbtr_scan_note_set(&s, key, "x"));
  }
  CHECK(dbtr_scan_note_set(&s, "one_more", "x") == DBTR_EINVAL);
  CHECK_STR_CONTAINS(dbtr_errmsg(), "one_more");
}

/* A file written with a note, then given attr of /provenance by the HDF5 API. */
static void refused(const char *attr, int numeric, const char *needle) {
  char dir[64], path[256];
  dbtr_scan s, back;
  REQUIRE(tmp_make(dir) == 0);
  tmp_path(path, dir, "bad.h5");
  REQUIRE_OK(make_scan(&s, DBTR_QUANTITY_COUNTS, DBTR_I0_SCALAR));
  for (int i = 0; i < DBTR_SCAN_MAX_NOTES; i++) {
    char key[8];
    snprintf(key, sizeof key, "k%d", i);
    REQUIRE_OK(dbtr_scan_note_set(&s, key, "x"));
  }
  REQUIRE_OK(dbtr_scan_write(&s, path, NULL));
  REQUIRE(numeric ? set_i64_attr(path, "/provenance", attr, 7) == 0 : set_str_attr(path, "/provenance", attr, "y", 0) == 0);
  CHECK(dbtr_scan_read(&back, path) == DBTR_EFORMAT);
  CHECK_STR_CONTAINS(dbtr_errmsg(), needle);
  CHECK(is_zeroed(&back));
  dbtr_scan_free(&s);
  tmp_remove(dir);
}

DBTR_TEST(notes_not_a_string_refused) { refused("k0", 1, "/provenance attribute 'k0': stored as int64"); }

DBTR_TEST(notes_too_many_refused) { refused("k8", 0, "/provenance attribute 'k8': at most 8 attributes"); }

DBTR_TEST_MAIN(notes_round_trip, notes_absent_reads_as_before, notes_set_replaces_and_limits, notes_not_a_string_refused,
               notes_too_many_refused)
