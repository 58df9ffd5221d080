"""CodeBuild's "Build State Change" event (EventBridge) as the build_finished Lambda receives it, and the
`BuildFinished` it means. The build's own environment (`BATON_RUN_ID`, `BATON_GATE`, `BATON_BUILD_KIND`,
`BATON_BUILD_KEY`, set by `BuildRequest.environment()`) names the gate; the event carries it under
`detail.additional-information.environment.environment-variables`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from baton.domain.merge_contracts import BuildFinished, BuildRequest


class _Variable(BaseModel):
    name: str
    value: str = ""


class _Environment(BaseModel):
    variables: list[_Variable] = Field(default_factory=list, alias="environment-variables")


class _AdditionalInformation(BaseModel):
    environment: _Environment = Field(default_factory=_Environment)


class CodeBuildStateDetail(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    build_status: str = Field(alias="build-status")
    project_name: str = Field(alias="project-name")
    build_id: str = Field(alias="build-id")
    additional_information: _AdditionalInformation = Field(
        default_factory=_AdditionalInformation, alias="additional-information"
    )


class CodeBuildStateChange(BaseModel):
    """The EventBridge envelope (only what Baton reads)."""

    model_config = ConfigDict(populate_by_name=True)

    source: str = "aws.codebuild"
    detail_type: str = Field(default="CodeBuild Build State Change", alias="detail-type")
    detail: CodeBuildStateDetail

    def finished(self) -> BuildFinished | None:
        """The Baton build this event ended, or None when the build was not started by Baton."""
        env = {v.name: v.value for v in self.detail.additional_information.environment.variables}
        try:
            request = BuildRequest.from_environment(env)
        except ValueError:
            return None
        if not request.build_key:
            return None
        return BuildFinished(
            run_id=request.run_id,
            gate=request.gate,
            kind=request.kind,
            build_key=request.build_key,
            build_status=self.detail.build_status,
            build_id=self.detail.build_id,
        )
