/*
 * print_names.c - names for the TVMScript printer: every variable and buffer
 * prints as an identifier that no other live name uses.
 *
 * IR names are hints (variables are compared by identity), so two different
 * variables may both be called "i", a name may be a Python keyword ("in") or
 * no identifier at all ("A.shared"). A name is fixed the first time a node is
 * printed: characters other than letters, digits and '_' become '_', a leading
 * digit gets a "v_" prefix, and a name already taken (or reserved) gets the
 * first free suffix `_1`, `_2`, ...
 *
 * Names are scoped as TVM's printer scopes them: a loop, block iter or let
 * variable's name is released when its scope closes, so sibling loops both
 * print `i` while a nested one prints `i_1`. Parameters, buffers and symbolic
 * variables declared at function level keep their names for the whole
 * function. The parser's scopes are lexical too, so the text reads back to
 * the same variables, and re-printing it gives the same names (a name that
 * was free stays free).
 */
#include "tir/print_priv.h"

#include <stdio.h>
#include <string.h>

/* Python keywords, and the names the printed text itself needs: the `T` and
 * `I` modules and the `range` builtin of `for i in range(n)`. */
static const char *const reserved_names[] = {
    "False", "None",   "True",    "and",      "as",   "assert", "async",  "await",
    "break", "class",  "continue", "def",     "del",  "elif",   "else",   "except",
    "finally", "for",  "from",    "global",   "if",   "import", "in",     "is",
    "lambda", "nonlocal", "not",  "or",       "pass", "raise",  "return", "try",
    "while", "with",   "yield",   "T",        "I",    "range",
};

/* ------------------------------------------------------------------------ */
/* String set                                                                */
/* ------------------------------------------------------------------------ */

static size_t str_hash(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (size_t)h;
}

static tir_print_strslot_t *strset_find(const tir_print_strset_t *set, const char *s) {
  if (!set->cap) return NULL;
  for (size_t i = str_hash(s) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
    if (!set->slots[i].name) return NULL;
    if (strcmp(set->slots[i].name, s) == 0) return &set->slots[i];
  }
}

static bool strset_has(const tir_print_strset_t *set, const char *s) {
  const tir_print_strslot_t *slot = strset_find(set, s);
  return slot && slot->live;
}

/* `s` must outlive the set (arena strings and literals). */
static bool strset_add(mlc_arena_t *arena, tir_print_strset_t *set, const char *s) {
  tir_print_strslot_t *found = strset_find(set, s);
  if (found) {
    found->live = true;
    return true;
  }
  if ((set->len + 1) * 2 > set->cap) {
    size_t cap = set->cap ? set->cap * 2 : 128;
    tir_print_strslot_t *slots = mlc_arena_alloc(arena, cap * sizeof(*slots));
    if (!slots) return false;
    for (size_t i = 0; i < set->cap; i++) {
      if (!set->slots[i].name) continue;
      size_t j = str_hash(set->slots[i].name) & (cap - 1);
      while (slots[j].name) j = (j + 1) & (cap - 1);
      slots[j] = set->slots[i];
    }
    set->slots = slots;
    set->cap = cap;
  }
  size_t i = str_hash(s) & (set->cap - 1);
  while (set->slots[i].name) i = (i + 1) & (set->cap - 1);
  set->slots[i] = (tir_print_strslot_t){.name = s, .live = true};
  set->len++;
  return true;
}

static void strset_release(tir_print_strset_t *set, const char *s) {
  tir_print_strslot_t *slot = strset_find(set, s);
  if (slot) slot->live = false;
}

/* ------------------------------------------------------------------------ */
/* Printer state                                                             */
/* ------------------------------------------------------------------------ */

bool tir_printer_init(tir_printer_t *p, mlc_strbuf_t *sb) {
  memset(p, 0, sizeof(*p));
  p->sb = sb;
  p->arena = mlc_arena_new();
  if (!p->arena) return false;
  tir_ptrmap_init(&p->names, p->arena);
  tir_ptrmap_init(&p->data_owner, p->arena);
  for (size_t i = 0; i < sizeof(reserved_names) / sizeof(reserved_names[0]); i++)
    if (!strset_add(p->arena, &p->taken, reserved_names[i])) return false;
  return true;
}

void tir_printer_fini(tir_printer_t *p) {
  mlc_arena_free(p->arena);
  mlc_free(p->loops);
  mlc_free(p->free_vars);
  mlc_free(p->scoped);
  p->scoped = NULL;
  p->arena = NULL;
  p->loops = NULL;
  p->free_vars = NULL;
}

const char *tir_printer_name_of(const tir_printer_t *p, const void *node) {
  return tir_ptrmap_get(&p->names, node);
}

/* `hint` with invalid characters replaced; "v" when empty. */
static char *sanitize(mlc_arena_t *arena, const char *hint) {
  if (!hint || !*hint) hint = "v";
  bool digit_first = *hint >= '0' && *hint <= '9';
  char *s = mlc_arena_printf(arena, "%s%s", digit_first ? "v_" : "", hint);
  if (!s) return NULL;
  for (char *c = s; *c; c++) {
    bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_';
    if (!ok) *c = '_';
  }
  return s;
}

const char *tir_printer_identifier(tir_printer_t *p, const char *hint) {
  char *s = sanitize(p->arena, hint);
  if (s && strset_has(&p->taken, s)) s = mlc_arena_printf(p->arena, "%s_1", s); /* a keyword */
  if (!s) {
    p->oom = true;
    return "_";
  }
  return s;
}

const char *tir_printer_define(tir_printer_t *p, const void *node, const char *hint) {
  const char *old = tir_printer_name_of(p, node);
  if (old) return old;
  char *base = sanitize(p->arena, hint);
  char *name = base;
  for (int k = 1; name && strset_has(&p->taken, name); k++)
    name = mlc_arena_printf(p->arena, "%s_%d", base, k);
  if (!name || !strset_add(p->arena, &p->taken, name) ||
      !tir_ptrmap_put(&p->names, node, name)) {
    p->oom = true;
    return "_";
  }
  return name;
}

const char *tir_printer_define_local(tir_printer_t *p, const tir_var_t *v) {
  if (tir_printer_name_of(p, v)) return tir_printer_name_of(p, v);
  if (p->nscoped == p->cap_scoped) {
    int cap = p->cap_scoped ? p->cap_scoped * 2 : 32;
    const void **grown = mlc_realloc(p->scoped, (size_t)cap * sizeof(*grown));
    if (!grown) {
      p->oom = true;
      return "_";
    }
    p->scoped = grown;
    p->cap_scoped = cap;
  }
  p->scoped[p->nscoped++] = v;
  return tir_printer_define(p, v, v->u.var.name);
}

int tir_printer_scope_open(const tir_printer_t *p) { return p->nscoped; }

/* The variables go back to having no name: a later use outside the scope
 * (malformed IR) would print as a free variable, and a later definition of
 * the same variable (a node reused in two sibling loops) names it again. */
void tir_printer_scope_close(tir_printer_t *p, int mark) {
  while (p->nscoped > mark) {
    const void *node = p->scoped[--p->nscoped];
    const char *name = tir_printer_name_of(p, node);
    if (!name) continue;
    strset_release(&p->taken, name);
    if (!tir_ptrmap_put(&p->names, node, NULL)) p->oom = true;
  }
}

const char *tir_printer_define_buffer(tir_printer_t *p, const tir_buffer_t *b) {
  if (b->data && !tir_ptrmap_get(&p->data_owner, b->data) &&
      !tir_ptrmap_put(&p->data_owner, b->data, (void *)b))
    p->oom = true;
  return tir_printer_define(p, b, b->name);
}

void tir_printer_put_var(tir_printer_t *p, const tir_var_t *v) {
  const char *name = tir_printer_name_of(p, v);
  if (!name) {
    const tir_buffer_t *owner = tir_ptrmap_get(&p->data_owner, v);
    if (owner && tir_printer_name_of(p, owner)) {
      mlc_sb_printf(p->sb, "%s.data", tir_printer_name_of(p, owner));
      return;
    }
    /* Used before any definition: a free variable. A dry run records it so
     * the real run declares it up front. */
    if (p->collect_free) tir_printer_note_free(p, v);
    name = tir_printer_define(p, v, v->u.var.name);
  }
  mlc_sb_append(p->sb, name);
}

void tir_printer_note_free(tir_printer_t *p, const tir_var_t *v) {
  for (int i = 0; i < p->nfree; i++)
    if (p->free_vars[i] == v) return;
  if (p->nfree == p->cap_free) {
    int cap = p->cap_free ? p->cap_free * 2 : 8;
    tir_var_t **grown = mlc_realloc(p->free_vars, (size_t)cap * sizeof(*grown));
    if (!grown) {
      p->oom = true;
      return;
    }
    p->free_vars = grown;
    p->cap_free = cap;
  }
  p->free_vars[p->nfree++] = (tir_var_t *)v;
}

void tir_printer_put_buffer(tir_printer_t *p, const tir_buffer_t *b) {
  const char *name = tir_printer_name_of(p, b);
  if (!name && p->collect_free) {
    /* Used before any declaration: a view, which a dry run records so the
     * real run declares it (print_views.c). It does not own its data var. */
    tir_printer_note_view(p, b);
    name = tir_printer_define(p, b, b->name);
  } else if (!name) {
    name = tir_printer_define_buffer(p, b);
  }
  mlc_sb_append(p->sb, name);
}

void tir_printer_push_loop(tir_printer_t *p, const tir_stmt_t *loop) {
  if (p->nloops == p->cap_loops) {
    int cap = p->cap_loops ? p->cap_loops * 2 : 16;
    const tir_stmt_t **grown = mlc_realloc(p->loops, (size_t)cap * sizeof(*grown));
    if (!grown) {
      p->oom = true;
      return;
    }
    p->loops = grown;
    p->cap_loops = cap;
  }
  p->loops[p->nloops++] = loop;
}

void tir_printer_pop_loop(tir_printer_t *p) {
  if (p->nloops > 0) p->nloops--;
}
