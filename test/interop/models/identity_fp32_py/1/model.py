"""Plain Triton Python-backend FP32 identity of any 2-D shape, for the unary bench suite's real-Triton
half: no PyTriton proxy between Triton and the model, so the server costs as little as a Python
backend can. The output tensor shares the input's memory (DLPack): no copy in the model."""
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            tensor = pb_utils.get_input_tensor_by_name(request, "INPUT0")
            out = pb_utils.Tensor.from_dlpack("OUTPUT0", tensor.to_dlpack())
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
        return responses
