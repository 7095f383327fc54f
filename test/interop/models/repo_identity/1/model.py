"""Plain Triton Python-backend identity (FP32). Not a PyTriton model, so it can be
unloaded and loaded again by name through the model-repository API."""
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            tensor = pb_utils.get_input_tensor_by_name(request, "INPUT0")
            out = pb_utils.Tensor("OUTPUT0", tensor.as_numpy())
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
        return responses
