"""preprocess: FEATURES = RAW * 0.5 (a stand-in for real feature extraction)."""

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            raw = pb_utils.get_input_tensor_by_name(request, "RAW").as_numpy()
            features = (raw * 0.5).astype(raw.dtype)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("FEATURES", features)]))
        return responses
