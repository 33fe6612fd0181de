/*
 * random_model.c - the random model: scores are uniform in [0, 1) from the
 * model's seeded RNG (support.h's xoshiro256**), so a search run with it is
 * reproducible and a saved model (its RNG state is in meta.json) continues
 * the same sequence. It keeps the samples it is given (they count in
 * cm_model_nsamples and are saved) but never trains. The XGBoost model
 * scores this way too until it has trained.
 */
#include "cost-model/model.h"

static int random_predict(cm_model_t *m, const cm_features_t *features, int n, double *scores) {
  (void)features;
  for (int i = 0; i < n; i++) scores[i] = mlc_rng_uniform(&m->rng);
  return MLC_OK;
}

const cm_model_ops_t cm_random_ops = {
    .name = "random",
    .train = NULL,
    .predict = random_predict,
    .save = NULL,
    .load = NULL,
    .free_impl = NULL,
};
