/* SPDX-License-Identifier: Apache-2.0 */
/*
 * settings.h — an integrator's parameters as a typed descriptor table.
 *
 * Each scheme keeps its settings in a struct of its own and describes every
 * field in one table (name, type, default, doc, offset, allowed values).
 * The table is all the rest of the library needs: gp_sim parses and prints
 * the parameters from it, gp_integrator_param lists them, and checkpoints
 * save and check them from it. Adding a parameter is one row and one field,
 * in the scheme's own file.
 *
 * Below everything else in integrators/: it knows nothing of gp_sim, and
 * reports a refusal as a sentence in the caller's buffer.
 */
#ifndef GP_SETTINGS_H
#define GP_SETTINGS_H

#include <stddef.h>

#include "gravplug.h"

typedef enum gp_setting_type {
    GP_SETTING_DOUBLE,   /* a double field, finite; >= min (> min when min_open) */
    GP_SETTING_INT,      /* an int field, a whole number in [min, max] */
    GP_SETTING_CHOICE    /* an int field, the index of one of choices[] */
} gp_setting_type;

typedef struct gp_setting {
    const char *name;
    gp_setting_type type;
    const char *deflt;          /* the default, as a user would write it */
    const char *doc;
    size_t offset;              /* of the field in the scheme's settings struct */
    double min, max;            /* DOUBLE: min (max unused); INT: [min, max] */
    int min_open;               /* DOUBLE: 1 when min itself is refused */
    const char *const *choices; /* CHOICE: the names, NULL-terminated */
    const char *word;           /* DOUBLE: a word taken instead of a number ... */
    double word_value;          /* ... and stored as this value */
} gp_setting;

/* Rows of a table (offsetof into the scheme's struct T). */
#define GP_SETTING_POSITIVE(T, field, deflt, doc) \
    { #field, GP_SETTING_DOUBLE, deflt, doc, offsetof(T, field), 0.0, 0.0, 1, NULL, NULL, 0.0 }
#define GP_SETTING_NONNEGATIVE(T, field, deflt, doc) \
    { #field, GP_SETTING_DOUBLE, deflt, doc, offsetof(T, field), 0.0, 0.0, 0, NULL, NULL, 0.0 }

/* The row of table[] named name, or NULL. */
const gp_setting *gp_setting_find(const gp_setting *table, size_t n, const char *name);

/* Parses value into the field of s in the struct at base. GP_OK, or
 * GP_ERR_INVALID_ARGUMENT with a sentence in why (the field unchanged). */
gp_status gp_setting_parse(const gp_setting *s, const char *value, void *base, char *why, size_t len);

/* Every row's default into the struct at base (zeroed first). */
void gp_setting_defaults(const gp_setting *table, size_t n, void *base);

/* The field as a user would write it (snprintf's return value). */
int gp_setting_format(const gp_setting *s, const void *base, char *buf, size_t len);

/* The field as a double, and back (checkpoints store each row so). */
double gp_setting_value(const gp_setting *s, const void *base);
void gp_setting_store(const gp_setting *s, void *base, double v);

/* Whether a stored double v is an allowed value of s: 0, or -1 with what
 * is wrong in why ("is 3 (must be 0 .. 2)"). */
int gp_setting_check(const gp_setting *s, double v, char *why, size_t len);

#endif /* GP_SETTINGS_H */
