/* tests/test_error.c: messages (recon/error.c) never carry what a terminal would act on:
 * they quote file content, and a hostile file must not clear the screen or retitle the
 * window of the person reading them. */
#include <string.h>

#include "recon/error.h"
#include "tests/test.h"

static void sanitized(const char *in, const char *want) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s", in);
  dbtr_sanitize(buf);
  if (strcmp(buf, want) != 0) TEST__FAIL("dbtr_sanitize gave \"%s\", expected \"%s\"", buf, want);
}

DBTR_TEST(control_bytes_replaced) {
  sanitized("plain text, 1.5 mm", "plain text, 1.5 mm");
  sanitized("a\x1b[2Jb", "a?[2Jb");  /* ESC: the start of every terminal command */
  sanitized("line\nbreak\ttab\r", "line?break?tab?");
  sanitized("del\x7f", "del?");
}

DBTR_TEST(utf8_kept_invalid_replaced) {
  sanitized("0.1 \xc2\xb5m", "0.1 \xc2\xb5m");          /* micro sign, valid UTF-8, as ImageJ writes it */
  sanitized("\xe2\x82\xac 1", "\xe2\x82\xac 1");        /* euro sign, 3 bytes */
  sanitized("\x9b" "2J", "?2J");                         /* C1 CSI alone: a command to 8-bit terminals */
  sanitized("\xc0\xaf", "??");                           /* overlong '/' */
  sanitized("\xed\xa0\x80", "???");                      /* a UTF-16 surrogate */
  sanitized("\xe2\x82", "??");                           /* cut short */
}

DBTR_TEST(messages_are_sanitized) {
  CHECK_EQ_INT(dbtr_err(DBTR_EFORMAT, "f.h5: attribute 'format': \"%s\"", "x\x1b]0;pwned\x07"), DBTR_EFORMAT);
  CHECK(strcmp(dbtr_errmsg(), "f.h5: attribute 'format': \"x?]0;pwned?\"") == 0);
}

DBTR_TEST_MAIN(control_bytes_replaced, utf8_kept_invalid_replaced, messages_are_sanitized)
