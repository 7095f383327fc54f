"""classify_bls: calls `preprocess` then `classify` (BLS) and streams one response per stage.

Decoupled: each request gets a response with STAGE="preprocess" (VALUES = the features), one with
STAGE="classify" (VALUES = the scores), then the final flag. A failing inner call ends the request
with that call's error.
"""

import numpy as np
import triton_python_backend_utils as pb_utils


def _call(model, name, tensor, output, request):
    kwargs = {}
    # Carries the caller's trace into the inner request where this Triton supports it.
    if hasattr(request, "trace"):
        kwargs["trace"] = request.trace()
    inner = pb_utils.InferenceRequest(
        model_name=model,
        requested_output_names=[output],
        inputs=[pb_utils.Tensor(name, tensor)],
        **kwargs,
    )
    response = inner.exec()
    if response.has_error():
        raise pb_utils.TritonModelException(f"{model}: {response.error().message()}")
    return pb_utils.get_output_tensor_by_name(response, output).as_numpy()


def _stage(stage, values):
    return pb_utils.InferenceResponse(
        [
            pb_utils.Tensor("STAGE", np.array([stage.encode()], dtype=np.object_)),
            pb_utils.Tensor("VALUES", values.astype(np.float32)),
        ]
    )


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            try:
                raw = pb_utils.get_input_tensor_by_name(request, "RAW").as_numpy()
                features = _call("preprocess", "RAW", raw, "FEATURES", request)
                sender.send(_stage("preprocess", features))
                scores = _call("classify", "FEATURES", features, "SCORES", request)
                sender.send(_stage("classify", scores), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
            except Exception as error:  # the client gets the error, the model keeps serving
                sender.send(
                    pb_utils.InferenceResponse(error=pb_utils.TritonError(str(error))),
                    flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL,
                )
        return None
