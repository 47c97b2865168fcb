#pragma once
// TF Serving's gRPC API: tensorflow.serving.PredictionService (Predict,
// GetModelMetadata) and tensorflow.serving.ModelService (GetModelStatus),
// generated from tools/serve/proto. The requests go through the same
// ModelRegistry and Predictor as the REST API's; errors are gRPC statuses
// with TF's codes.
#include <grpcpp/grpcpp.h>

#include "metrics.h"
#include "model_manager.h"
#include "options.h"
#include "predictor.h"
#include <tensorflow_serving/apis/model_service.grpc.pb.h>  // generated from tools/serve/proto
#include <tensorflow_serving/apis/prediction_service.grpc.pb.h>  // generated from tools/serve/proto

namespace kiln::serve {

class PredictionServiceImpl final : public tensorflow::serving::PredictionService::Service {
 public:
  PredictionServiceImpl(const Options& options, ModelRegistry& models, Predictor& predictor, Metrics& metrics)
      : options_(options), models_(models), predictor_(predictor), metrics_(metrics) {}
  grpc::Status Predict(grpc::ServerContext* context, const tensorflow::serving::PredictRequest* request,
                       tensorflow::serving::PredictResponse* response) override;
  grpc::Status GetModelMetadata(grpc::ServerContext* context, const tensorflow::serving::GetModelMetadataRequest* request,
                                tensorflow::serving::GetModelMetadataResponse* response) override;

 private:
  const Options& options_;
  ModelRegistry& models_;
  Predictor& predictor_;
  Metrics& metrics_;
};

class ModelServiceImpl final : public tensorflow::serving::ModelService::Service {
 public:
  ModelServiceImpl(ModelRegistry& models, Metrics& metrics) : models_(models), metrics_(metrics) {}
  grpc::Status GetModelStatus(grpc::ServerContext* context, const tensorflow::serving::GetModelStatusRequest* request,
                              tensorflow::serving::GetModelStatusResponse* response) override;

 private:
  ModelRegistry& models_;
  Metrics& metrics_;
};

}  // namespace kiln::serve
