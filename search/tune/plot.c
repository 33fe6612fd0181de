/*
 * plot.c - the tuning curve as an SVG file (mlc-tune --plot): for each task,
 * its best GFLOP/s so far against its trials (a step line: the best only
 * changes when a trial is faster than every one before), a dashed line at the
 * default schedule's level in the same colour, axes, ticks at round numbers,
 * a legend and the target in the title. A run resumed from a
 * database starts each curve at the trials and best the database held.
 *
 * When some task performs no arithmetic ms_func_flop counts, GFLOP/s cannot
 * compare the tasks, so the y axis becomes 1 / best time (runs per ms) for all.
 *
 * SVG is written by hand: it is a small XML vocabulary, and the file opens in
 * any browser. Text (task names, the target) is XML-escaped.
 */
#include <math.h>
#include <string.h>

#include "search/tune/tune_internal.h"

#define W 800
#define H 480
#define LEFT 70
#define RIGHT 180 /* room for the legend */
#define TOP 40
#define BOTTOM 50

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                     "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define NCOLORS (int)(sizeof colors / sizeof *colors)

typedef struct {
  bool gflops;              /* y is GFLOP/s (else 1/ms) */
  double xmax, ymax;
  mlc_strbuf_t *sb;
} plot_t;

static void put_escaped(mlc_strbuf_t *sb, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '<': mlc_sb_append(sb, "&lt;"); break;
    case '>': mlc_sb_append(sb, "&gt;"); break;
    case '&': mlc_sb_append(sb, "&amp;"); break;
    case '"': mlc_sb_append(sb, "&quot;"); break;
    case '\'': mlc_sb_append(sb, "&apos;"); break;
    default:
      if ((unsigned char)*s >= 0x20 || *s == '\t') mlc_sb_putc(sb, *s);
      break;
    }
  }
}

static double y_value(const plot_t *p, const tune_task_t *t, double secs) {
  if (!(secs > 0)) return 0;
  return p->gflops ? tune_gflops(t->flop, secs) : 1e-3 / secs;
}

static double px(const plot_t *p, double x) { return LEFT + x / p->xmax * (W - LEFT - RIGHT); }
static double py(const plot_t *p, double y) { return H - BOTTOM - y / p->ymax * (H - TOP - BOTTOM); }

/* A round step (1, 2 or 5 times a power of ten) giving about `want` ticks. */
static double nice_step(double max, int want) {
  double raw = max / want;
  double mag = pow(10, floor(log10(raw)));
  double f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static void axes(plot_t *p, const char *target) {
  mlc_strbuf_t *sb = p->sb;
  double x0 = LEFT, x1 = W - RIGHT, y0 = H - BOTTOM, y1 = TOP;
  mlc_sb_printf(sb, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
  mlc_sb_append(sb, "<text x=\"400\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">mlc-tune: ");
  put_escaped(sb, target);
  mlc_sb_append(sb, "</text>\n");
  mlc_sb_printf(sb, "<g stroke=\"black\" stroke-width=\"1\"><line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/>"
                "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/></g>\n", x0, y0, x1, y0, x0, y0, x0, y1);
  double xs = nice_step(p->xmax, 8), ys = nice_step(p->ymax, 6);
  mlc_sb_append(sb, "<g font-size=\"11\" fill=\"black\">\n");
  for (double x = 0; x <= p->xmax + 1e-9; x += xs) {
    mlc_sb_printf(sb, "<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"black\"/>", px(p, x), y0, px(p, x), y0 + 5);
    mlc_sb_printf(sb, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%g</text>\n", px(p, x), y0 + 18, x);
  }
  for (double y = 0; y <= p->ymax + 1e-12; y += ys) {
    mlc_sb_printf(sb, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#dddddd\"/>", x0, py(p, y), x1, py(p, y));
    mlc_sb_printf(sb, "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>\n", x0 - 6, py(p, y) + 4, y);
  }
  mlc_sb_append(sb, "</g>\n");
  mlc_sb_printf(sb, "<text x=\"%g\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">trials of the task</text>\n",
                (x0 + x1) / 2, H - 12);
  mlc_sb_printf(sb, "<text x=\"18\" y=\"%g\" text-anchor=\"middle\" font-size=\"13\" "
                "transform=\"rotate(-90 18 %g)\">%s</text>\n", (y0 + y1) / 2, (y0 + y1) / 2,
                p->gflops ? "best GFLOP/s" : "1 / best time (1/ms)");
}

static void curve(plot_t *p, const tune_task_t *t, int index) {
  const char *color = colors[index % NCOLORS];
  mlc_strbuf_t *sb = p->sb;
  mlc_sb_printf(sb, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
  double last_y = -1, last_x = 0;
  for (size_t i = 0; i < t->curve.len; i++) {
    const tune_point_t *pt = &t->curve.data[i];
    double y = y_value(p, t, pt->best_secs);
    if (!(y > 0)) continue;
    if (last_y >= 0) mlc_sb_printf(sb, "%.1f,%.1f ", px(p, pt->trials), py(p, last_y));
    mlc_sb_printf(sb, "%.1f,%.1f ", px(p, pt->trials), py(p, y));
    last_y = y;
    last_x = pt->trials;
  }
  mlc_sb_append(sb, "\"/>\n");
  double dy = y_value(p, t, t->default_secs);
  if (dy > 0)
    mlc_sb_printf(sb, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1\" "
                  "stroke-dasharray=\"5,4\"/>\n", LEFT, py(p, dy), W - RIGHT, py(p, dy), color);
  if (last_y >= 0)
    mlc_sb_printf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", px(p, last_x), py(p, last_y), color);
  double ly = TOP + 10 + 20 * index;
  double lx = W - RIGHT + 15;
  mlc_sb_printf(sb, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"2\"/>", lx, ly, lx + 20,
                ly, color);
  mlc_sb_printf(sb, "<text x=\"%g\" y=\"%g\" font-size=\"12\">", lx + 26, ly + 4);
  put_escaped(sb, t->name);
  if (t->weight > 1) mlc_sb_printf(sb, " (x%d)", t->weight);
  mlc_sb_append(sb, "</text>\n");
}

/* Axis ranges from every task's points (at least 1 on each axis). */
static void ranges(plot_t *p, const tune_run_t *run) {
  p->gflops = true;
  for (int i = 0; i < run->ntasks; i++)
    if (!(run->tasks[i].flop > 0)) p->gflops = false;
  p->xmax = 1;
  p->ymax = 0;
  for (int i = 0; i < run->ntasks; i++) {
    const tune_task_t *t = &run->tasks[i];
    for (size_t k = 0; k < t->curve.len; k++) {
      if (t->curve.data[k].trials > p->xmax) p->xmax = t->curve.data[k].trials;
      double y = y_value(p, t, t->curve.data[k].best_secs);
      if (y > p->ymax) p->ymax = y;
    }
  }
  for (int i = 0; i < run->ntasks; i++) {
    double y = y_value(p, &run->tasks[i], run->tasks[i].default_secs);
    if (y > p->ymax) p->ymax = y;
  }
  if (!(p->ymax > 0)) p->ymax = 1;
  p->ymax *= 1.1; /* headroom above the best */
  p->xmax = nice_step(p->xmax, 8) * ceil(p->xmax / nice_step(p->xmax, 8));
}

int tune_plot_write(const tune_run_t *run, const char *path) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  plot_t p = {.sb = &sb};
  ranges(&p, run);
  mlc_sb_printf(&sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-family=\"sans-serif\">\n", W, H, W, H);
  axes(&p, run->target_str);
  for (int i = 0; i < run->ntasks; i++) curve(&p, &run->tasks[i], i);
  mlc_sb_printf(&sb, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555555\">dashed: default schedule</text>\n",
                W - RIGHT + 15, TOP + 20 * run->ntasks + 14);
  mlc_sb_append(&sb, "</svg>\n");
  int st = sb.failed ? mlc_error_set(MLC_ENOMEM, "out of memory drawing the plot")
                     : mlc_write_file(path, sb.data, sb.len);
  mlc_sb_free(&sb);
  if (st != MLC_OK && st != MLC_ENOMEM) mlc_error_prefix("writing the plot");
  return st;
}
