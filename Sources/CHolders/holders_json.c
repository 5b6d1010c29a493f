// The HOLDERS-VALUE JSON text of one target's answer, for the C writers: the census's
// `growing` (the preload library writes it without Swift) and the scanner's tests. The
// recorder writes the same bytes from the same data in Swift (DeallocTrace's
// HoldersValue.swift); a test of DeallocTraceTests holds the two writers to each other.
#include <stdlib.h>

#include "CHoldersExtras.h"
#include "internal.h"

static void write_text(ch_json *json, cholders_text text) {
  ch_json_string(json, text.bytes, text.length);
}

static void write_root(ch_json *json, const cholders_root *root) {
  static const char *const kinds[] = {"global", "stack", "cycle", "heap", "none"};
  int kind = root->kind >= 0 && root->kind <= CHOLDERS_ROOT_NONE ? root->kind : CHOLDERS_ROOT_NONE;
  ch_json_raw(json, "{\"kind\":\"");
  ch_json_raw(json, kinds[kind]);
  ch_json_raw(json, "\"");
  if (kind == CHOLDERS_ROOT_GLOBAL) {
    if (root->has_symbol) {
      ch_json_raw(json, ",\"sym\":");
      write_text(json, root->symbol);
    } else {
      ch_json_raw(json, ",\"off\":");
      ch_json_hex(json, root->offset);
    }
    ch_json_raw(json, ",\"mod\":");
    write_text(json, root->module);
  } else if (kind == CHOLDERS_ROOT_STACK && root->tid >= 0) {
    ch_json_raw(json, ",\"tid\":");
    ch_json_int(json, root->tid);
  }
  ch_json_raw(json, "}");
}

static void write_captures(ch_json *json, const cholders_step *step) {
  ch_json_raw(json, ",\"captures\":[");
  for (size_t i = 0; i < step->capture_count; i++) {
    if (i) ch_json_raw(json, ",");
    write_text(json, step->captures[i]);
  }
  ch_json_raw(json, "]");
  if (step->more_captures > 0) {
    ch_json_raw(json, ",\"more_captures\":");
    ch_json_int(json, step->more_captures);
  }
}

static void write_step(ch_json *json, const cholders_step *step) {
  ch_json_raw(json, "{\"type\":");
  write_text(json, step->type);
  ch_json_raw(json, ",\"obj\":");
  ch_json_hex(json, step->object);
  ch_json_raw(json, ",\"off\":");
  ch_json_int(json, step->offset);
  if (step->kind == CHOLDERS_STEP_FIELD) {
    ch_json_raw(json, ",\"field\":");
    write_text(json, step->field);
  } else if (step->kind == CHOLDERS_STEP_ELEMENT) {
    ch_json_raw(json, ",\"element\":");
    ch_json_int(json, step->element);
    ch_json_raw(json, ",\"count\":");
    ch_json_int(json, step->count);
  } else if (step->kind == CHOLDERS_STEP_CAPTURES) {
    write_captures(json, step);
  }
  ch_json_raw(json, "}");
}

static void write_path(ch_json *json, const cholders_path *path) {
  ch_json_raw(json, "{\"root\":");
  write_root(json, &path->root);
  ch_json_raw(json, ",\"steps\":[");
  for (size_t i = 0; i < path->step_count; i++) {
    if (i) ch_json_raw(json, ",");
    write_step(json, &path->steps[i]);
  }
  ch_json_raw(json, "]}");
}

void ch_json_holders(ch_json *json, const cholders_holders *holders) {
  if (holders == NULL || !holders->found) {
    ch_json_raw(json, "null");
    return;
  }
  ch_json_raw(json, "{\"direct\":");
  ch_json_int(json, (int64_t)holders->direct);
  ch_json_raw(json, ",\"more\":");
  ch_json_int(json, (int64_t)holders->more);
  ch_json_raw(json, ",\"paths\":[");
  for (size_t k = 0; k < holders->path_count; k++) {
    if (k) ch_json_raw(json, ",");
    write_path(json, &holders->paths[k]);
  }
  ch_json_raw(json, "]");
  if (holders->surplus > 0) {
    ch_json_raw(json, ",\"surplus\":");
    ch_json_int(json, (int64_t)holders->surplus);
  }
  ch_json_raw(json, ",\"scan_us\":");
  ch_json_int(json, (int64_t)holders->scan_us);
  ch_json_raw(json, "}");
}

char *cholders_holders_json(const cholders_holders *holders) {
  ch_json json = {NULL, 0, 0, 0};
  ch_json_holders(&json, holders);
  if (json.failed) {
    free(json.bytes);
    return NULL;
  }
  return json.bytes;
}
