# model/: the learned device-selection model (public header model/model.h,
# model/README.md), archived in libmodel.a; trains and predicts with
# XGBoost's C API (libxgboost, loaded with dlopen on first use). Uses costs/ and the analyzer's
# feature types; never linked into the layer.
MODEL_SRCS := $(wildcard model/*.c)
MODEL_LIB := $(B)/lib/libmodel.a
MODEL_LIBS := -ldl
# Under ASan (SAN=1) the C++ runtime must be there when the process starts:
# ASan resolves its __cxa_throw interceptor then, and an exception thrown
# inside a libxgboost loaded later (a corrupt model file: XGBoost reports
# errors by throwing, caught in its C API) otherwise aborts in ASan's
# CHECK "real___cxa_throw != 0".
ifeq ($(SAN),1)
MODEL_LIBS += -Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state
endif

$(MODEL_LIB): $(call objs,$(MODEL_SRCS))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(MODEL_LIB)

# The model's unit test: the model and the cost database (XGBoost loaded at run time).
UNIT_LIBS_test_model := $(MODEL_LIB) $(CDB_LIB) $(MODEL_LIBS) -lm
$(B)/tests/test_model: $(MODEL_LIB) $(CDB_LIB)
