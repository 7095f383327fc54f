"""Plain Triton Python-backend BF16 identity. numpy has no bfloat16, so the tensor is
passed through with DLPack (as_numpy() is not available for BF16)."""
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            tensor = pb_utils.get_input_tensor_by_name(request, "INPUT0")
            out = pb_utils.Tensor.from_dlpack("OUTPUT0", tensor.to_dlpack())
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
        return responses
