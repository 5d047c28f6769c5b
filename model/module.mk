# model/: the learned device-selection model (public header model/model.h,
# model/README.md), archived in libmodel.a; trains and predicts with
# XGBoost's C API (libxgboost, loaded with dlopen on first use). Uses costs/ and the analyzer's
# feature types; never linked into the layer.
MODEL_SRCS := $(wildcard model/*.c)
MODEL_LIB := $(B)/lib/libmodel.a
MODEL_LIBS := -ldl

$(MODEL_LIB): $(call objs,$(MODEL_SRCS))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(MODEL_LIB)

UNIT_LIBS_test_model := $(MODEL_LIB) $(OPT_TEST_LIBS) $(OPT_LIBS) $(MODEL_LIBS) -ldl -lm
$(B)/tests/test_model: $(MODEL_LIB) $(OPT_TEST_LIBS) $(ANA_SO)
